//! Which characters may be shown to a person: one rule for the server, which refuses
//! display names with anything else, and for clients, which replace anything else in what
//! they print (a name from another server, an error message, ...).

/// Whether a character may be printed: no control characters (C0, DEL, C1: ESC, BEL, CR,
/// ...), no invisible or text-direction formatting characters (which could make one name
/// pose as another or reorder the rest of a line), no whitespace but the plain space, no
/// private-use or unassigned-plane characters.
pub fn printable(c: char) -> bool {
    if c.is_control() {
        return false;
    }
    !matches!(c as u32,
        0x00AD | 0x034F | 0x061C | 0x115F | 0x1160 | 0x17B4 | 0x17B5 | 0x180E
        | 0x2000..=0x200F | 0x2028..=0x202F | 0x205F..=0x206F | 0x3164 | 0xFE00..=0xFE0F
        | 0xFEFF | 0xFFA0 | 0xFFF0..=0xFFFF | 0xE000..=0xF8FF | 0xE0000..=0xE0FFF
        | 0xF0000..=0x10FFFF)
        && (c == ' ' || !c.is_whitespace())
}

#[cfg(test)]
mod tests {
    use super::printable;

    #[test]
    fn letters_of_any_script_and_the_space_are_printable() {
        assert!("Kris Burm Çağrı 大島 Ωμέγα".chars().all(printable));
    }

    #[test]
    fn controls_invisibles_and_direction_marks_are_not() {
        for c in [
            '\u{1b}', '\u{7}', '\n', '\r', '\u{9b}', '\u{7f}', '\u{200b}', '\u{202e}', '\u{feff}',
            '\u{e000}', '\t', '\u{a0}',
        ] {
            assert!(!printable(c), "U+{:04X}", c as u32);
        }
    }
}
