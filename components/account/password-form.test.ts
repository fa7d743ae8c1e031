import { createElement, type ReactElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { describe, expect, it, vi } from "vitest";
import { ChangePasswordForm, ResetPasswordForm } from "./password-form";
import { SignInForm } from "../sign-in-form";

// The HTML the server sends for each form that carries a password, before any script runs: submitted then
// (scripts blocked or still loading), a GET form puts every named field in the URL, the history and the
// server's log. Each must post, name no field, and keep its button disabled until React takes over.

vi.mock("next/navigation", () => ({ useRouter: () => ({ push: () => {}, replace: () => {}, refresh: () => {} }) }));

const html = (form: ReactElement) =>
  renderToStaticMarkup(createElement(QueryClientProvider, { client: new QueryClient() }, form));

describe.each([
  ["the password change", createElement(ChangePasswordForm, { required: false })],
  ["the required change after a temporary password", createElement(ChangePasswordForm, { required: true })],
  ["the reset link's form", createElement(ResetPasswordForm, { token: "tok_123" })],
  ["sign-in", createElement(SignInForm, { next: "/", expectedUrl: "http://settle.test" })],
])("%s, as served before its scripts run", (_name, form) => {
  const page = html(form);

  it("posts, so a native submit never builds a URL from its fields", () => {
    expect(page).toMatch(/<form[^>]* method="post"/);
  });

  it("names none of its fields, so a native submit sends nothing", () => {
    expect(page).toMatch(/type="password"/);
    expect(page).not.toMatch(/<input[^>]* name="/);
  });

  it("keeps its button disabled and says what to do if the scripts never come", () => {
    expect(page).toMatch(/<button[^>]* type="submit"[^>]* disabled=""|<button[^>]* disabled=""[^>]* type="submit"/);
    expect(page).toContain('data-testid="scripts-missing"');
  });
});
