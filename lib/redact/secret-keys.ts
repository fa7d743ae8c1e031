import { processWide } from "../process-wide";

// Which names say "the value beside me is a secret": an object's key (`password`), the name of a name/value
// pair (`{name: "X-Api-Key", value: …}`), the key of a `key=value` in text. One rule for all three.
//
// A name is read as a person would read it, not as its bytes: NFKC (fullwidth ｐａｓｓ is pass), accents and
// invisible characters dropped, Cyrillic and Greek look-alikes read as the Latin letters they imitate
// ("раssword" with a Cyrillic р and а), then cut into words at separators and case changes
// (`DB_PASSWORD`, `Pass_Word`, `x-api-key`, `userPin`) and folded together without them (`password`,
// `xapikey`). The folded name is searched for the long parts (they do not occur inside ordinary words);
// the short words (`pin`, `otp`, `pwd`) must be a whole word of the name, or `shipping` and `spinner` would
// match.

/** Found anywhere in the folded name. */
const SECRET_PARTS = [
  "token",
  "secret",
  "passw",
  "passphrase",
  "passcode",
  "authorization",
  "apikey",
  "cookie",
  "credential",
  "privatekey",
  "accesskey",
  "sessionid",
  "sessionkey",
  "bearer",
  "signature",
  "cvv",
  "cardnumber",
  "creditcard",
  "cardno",
  "ccnumber",
  "securitycode",
  "totp",
  "otpcode",
] as const;

/** A whole word of the name: too short to search for inside other words. */
const SECRET_WORDS = new Set(["pwd", "pw", "pass", "pin", "otp", "cvc", "auth", "sig", "mfa", "2fa", "hotp"]);

const PARTS = new RegExp(SECRET_PARTS.join("|"));
/** A cheap first look: a name none of whose letters could start a secret word is no secret. */
const MAY_BE_SECRET = /tok|sec|pas|pw|pin|otp|cv|aut|coo|cre|pri|acc|api|ses|bea|sig|car|ccn|mfa|2fa|hotp|totp/i;

// Cyrillic and Greek letters that look like Latin ones, upper and lower case (Unicode's confusables, the
// letters of the alphabets a look-alike attack reaches for first).
const LOOK_ALIKE_FROM = "авеёкмнорстухѕіїјԁԛԝһӏѡүɡАВЕКМНОРСТУХЅІЈԀԚԜҺӀαβεηικνορτυχωΑΒΕΖΗΙΚΜΝΟΡΤΥΧ";
const LOOK_ALIKE_TO = "abeekmhopctyxsiijdqwhlwygABEKMHOPCTYXSIJDQWHIabenikvoptuxwABEZHIKMNOPTYX";
const LOOK_ALIKE = new RegExp(`[${LOOK_ALIKE_FROM}]`, "g");
/** Combining marks and the characters Unicode says are invisible (zero-width joiners, soft hyphen, BOM…). */
const INVISIBLE = /[\p{M}\p{Default_Ignorable_Code_Point}]/gu;
const ASCII = /^[\x20-\x7e]*$/;

/** The name as a person reads it: NFKC, no marks or invisible characters, look-alikes as Latin. Case kept. */
function readable(name: string): string {
  if (ASCII.test(name)) return name;
  return name
    .normalize("NFKD")
    .replace(INVISIBLE, "")
    .normalize("NFKC")
    .replace(LOOK_ALIKE, (c) => LOOK_ALIKE_TO[LOOK_ALIKE_FROM.indexOf(c)]!);
}

/** The name's words, lower case: cut at anything not a letter or digit, and where lower case turns upper. */
export function nameWords(name: string): string[] {
  return (
    readable(name).match(/[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+(?:[a-z]+|[A-Z]+(?![a-z]))?|[\p{L}\p{N}]+/gu) ?? []
  ).map((w) => w.toLowerCase());
}

/** The name folded: its words joined, so `Pass_Word`, `PASS-WORD` and `passWord` are all `password`. */
export const foldName = (name: string): string => nameWords(name).join("");

// Names repeat from record to record (every envelope of a tool has the same keys): each is read once, and
// the memory of them is bounded (emptied when full), whatever names a caller invents.
const readNames = () => processWide("secretKeyNames", () => new Map<string, boolean>());
const READ_NAMES_MAX = 10_000;

/** Whether a value under this name (a key, a pair's name, the key of `key=value`) is a secret. */
export function isSecretKey(name: string): boolean {
  const read = readNames();
  const known = read.get(name);
  if (known !== undefined) return known;
  const secret = readSecretKey(name.length > 200 ? name.slice(0, 200) : name);
  if (read.size >= READ_NAMES_MAX) read.clear();
  if (name.length <= 200) read.set(name, secret);
  return secret;
}

function readSecretKey(head: string): boolean {
  if (ASCII.test(head)) {
    // Squeezed (the folded name, for ASCII), so that no separator (`P_a_s_s`) hides a word from the first look.
    const squeezed = head.replace(/[^A-Za-z0-9]+/g, "").toLowerCase();
    if (!MAY_BE_SECRET.test(squeezed)) return false;
    if (PARTS.test(squeezed)) return true;
  }
  const words = nameWords(head);
  return PARTS.test(words.join("")) || words.some((w) => SECRET_WORDS.has(w));
}

/** A text in which some name could be a secret one: what is worth parsing as JSON or scanning for `key=value`. */
export function mayNameSecret(text: string): boolean {
  if (MAY_BE_SECRET.test(text) || !ASCII.test(text)) return true;
  // `A_pi-Key`: a name cut by separators is read whole, as the key rule reads it.
  return /[-_.]/.test(text) && MAY_BE_SECRET.test(text.replace(/[-_.]+/g, ""));
}

// Name/value pairs: an object naming a secret in a name field has its value fields redacted (`{name:
// "X-Api-Key", value: …}`, AWS's `{Name, Value}`, Postman's `{key, value}`, HAR's headers, CloudFormation's
// `{ParameterKey, ParameterValue}`). Field names are compared folded, so `Name`, `header_name` and
// `ParameterKey` are all theirs.
const PAIR_NAME_FIELDS = new Set(
  "name key header headername field fieldname param paramname parameter parametername parameterkey variable var envvar label".split(
    " ",
  ),
);
const PAIR_VALUE_FIELDS = new Set(
  "value values val data content text headervalue fieldvalue paramvalue parametervalue".split(" "),
);

/** A field that names the other half of a pair. */
export function isPairNameField(key: string): boolean {
  // Every name field starts with one of these letters: most keys are turned away without a copy.
  if (key.length > 24 || !"nkhfpvelNKHFPVEL".includes(key[0] ?? "")) return false;
  const k = key.toLowerCase();
  return PAIR_NAME_FIELDS.has(k) || (/[-_. ]/.test(k) && PAIR_NAME_FIELDS.has(k.replace(/[-_. ]/g, "")));
}

/** A field that holds a pair's value. */
export const isPairValueField = (key: string): boolean => key.length <= 24 && PAIR_VALUE_FIELDS.has(foldName(key));
