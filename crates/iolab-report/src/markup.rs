//! HTML escaping, for the report's page and the sections other modules add to it.

/// `s` as HTML text: `&`, `<`, `>` and `"` escaped.
pub(crate) fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
