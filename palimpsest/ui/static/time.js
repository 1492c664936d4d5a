// Times: ISO-8601 UTC strings from the API, shown compactly; inputs are read as UTC.

/** "2024-04-27" at UTC midnight, else "2024-02-10 11:02Z" (seconds when they matter). */
export function fmt(iso, missing = "–") {
  if (!iso) return missing;
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const day = d.toISOString().slice(0, 10);
  if (d.getUTCHours() === 0 && d.getUTCMinutes() === 0 && d.getUTCSeconds() === 0) return day;
  const sec = d.getUTCSeconds() ? ":" + String(d.getUTCSeconds()).padStart(2, "0") : "";
  return `${day} ${d.toISOString().slice(11, 16)}${sec}Z`;
}

/** A half-open valid-time window in words. */
export function windowText(from, to) {
  return `${from ? fmt(from) : "always"} → ${to ? fmt(to) : "open"}`;
}

/** The value of a date input (UTC midnight) as ISO, or "" for none. */
export function dateToIso(value) {
  return value ? `${value}T00:00:00Z` : "";
}

/** The date part of an ISO time, for a date input. */
export function isoToDate(iso) {
  return iso ? new Date(iso).toISOString().slice(0, 10) : "";
}

/** A datetime-local value read as UTC, to ISO (seconds kept). */
export function localToIso(value) {
  if (!value) return "";
  const v = value.length === 16 ? value + ":00" : value;
  return v + "Z";
}

export function isoToLocal(iso) {
  return iso ? new Date(iso).toISOString().slice(0, 19) : "";
}

export function ms(iso) {
  return new Date(iso).getTime();
}
