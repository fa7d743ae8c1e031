import { describe, expect, it } from "vitest";
import { inSettingsScope, keptSetting, noteSettingsVersion } from "./settings-version";

// The rule of a kept setting: used only by a request that read the settings version, and only while the copy
// was loaded under that version or a later one (docs/decisions/040-settings-on-every-instance.md).

/** A setting whose loads are counted, each returning the load's number. */
function counted(name: string) {
  let loads = 0;
  const kept = keptSetting<string | object, number>(name);
  return { get: (key: string | object) => kept.get(key, async () => ++loads), loads: () => loads };
}

const request = <T>(version: number | null, fn: () => Promise<T>) =>
  inSettingsScope(async () => {
    noteSettingsVersion(version);
    return fn();
  });

describe("keptSetting", () => {
  it("loads every time outside a request, and in a request that read no version", async () => {
    const s = counted("test-outside");
    await s.get("k");
    await s.get("k");
    await request(null, () => s.get("k"));
    expect(s.loads()).toBe(3);
  });

  it("keeps a copy for requests of the same version, and loads again once a request reads a newer one", async () => {
    const s = counted("test-versions");
    expect(await request(5, () => s.get("k"))).toBe(1);
    expect(await request(5, () => s.get("k"))).toBe(1);
    // An older request may use a newer copy: it holds every write that request must see.
    expect(await request(4, () => s.get("k"))).toBe(1);
    expect(await request(6, () => s.get("k"))).toBe(2);
    expect(await request(6, () => s.get("k"))).toBe(2);
    expect(s.loads()).toBe(2);
  });

  it("a slow load of an older request does not put its copy back over a newer one", async () => {
    const kept = keptSetting<string, string>("test-race");
    let finishSlow: (v: string) => void = () => {};
    const slow = request(1, () => kept.get("k", () => new Promise<string>((resolve) => (finishSlow = resolve))));
    expect(await request(2, () => kept.get("k", async () => "new"))).toBe("new");
    finishSlow("old");
    expect(await slow).toBe("old");
    expect(await request(2, () => kept.get("k", async () => "loaded again"))).toBe("new");
  });

  it("keeps per key, object keys too, and a request's version only grows", async () => {
    const s = counted("test-keys");
    const handle = {};
    await request(1, () => s.get(handle));
    await request(1, () => s.get("k"));
    expect(await request(1, () => s.get(handle))).toBe(1);
    expect(
      await inSettingsScope(async () => {
        noteSettingsVersion("9");
        noteSettingsVersion("3");
        return s.get(handle);
      }),
    ).toBe(3);
  });
});
