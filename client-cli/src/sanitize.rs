//! Text from the network is never printed as it came: a display name or an error message
//! could carry terminal escape sequences (clear the screen, set the window title, ...).
//! [`clean`] makes any string safe to put on a terminal.

/// The longest piece of server text shown as is; longer text is cut with an ellipsis.
pub const MAX_CHARS: usize = 200;

/// `text` with every control character (C0, DEL, C1: ESC, BEL, CR, ...), every invisible
/// or text-direction formatting character replaced by `?`, and cut to [`MAX_CHARS`].
pub fn clean(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(MAX_CHARS * 4));
    for (i, c) in text.chars().enumerate() {
        if i == MAX_CHARS {
            out.push('…');
            break;
        }
        out.push(if safe(c) { c } else { '?' });
    }
    out
}

/// `text` with every unsafe character replaced by `?`, whatever its length: the last
/// guard before a line is printed.
pub fn strip(text: &str) -> String {
    text.chars()
        .map(|c| if safe(c) { c } else { '?' })
        .collect()
}

/// Whether a character may be printed: the rule the server applies to display names.
pub use protocol::text::printable as safe;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_bells_become_question_marks() {
        let hostile = "\u{1b}[2J\u{1b}]0;pwn\u{7}evil";
        let cleaned = clean(hostile);
        assert_eq!(cleaned, "?[2J?]0;pwn?evil");
        assert!(cleaned.chars().all(|c| !c.is_control()));
    }

    #[test]
    fn c1_controls_newlines_and_direction_overrides_are_replaced() {
        assert_eq!(clean("a\u{9b}31mb"), "a?31mb", "C1 CSI");
        assert_eq!(clean("line\nbreak\r"), "line?break?");
        assert_eq!(clean("\u{202e}evil"), "?evil", "right-to-left override");
        assert_eq!(clean("zero\u{200b}width"), "zero?width");
        assert_eq!(clean("tab\there"), "tab?here");
    }

    #[test]
    fn ordinary_names_are_unchanged() {
        for name in ["Alice", "Jürgen Müller", "李小龙", "o'Brien (2)", "a b"] {
            assert_eq!(clean(name), name);
        }
    }

    #[test]
    fn long_text_is_cut() {
        let long = "x".repeat(1000);
        let cleaned = clean(&long);
        assert_eq!(cleaned.chars().count(), MAX_CHARS + 1);
        assert!(cleaned.ends_with('…'));
    }
}
