//! Which characters may be shown to a person: one rule for the server, which refuses
//! display names with anything else, and for clients, which replace anything else in what
//! they print (a name from another server, an error message, ...).

use unicode_properties::{GeneralCategory, GeneralCategoryGroup, UnicodeGeneralCategory};

/// Whether a character may be printed: by its Unicode general category, no control (C0,
/// DEL, C1: ESC, BEL, CR, ...), format (invisible or text-direction characters, which could
/// make one name pose as another or reorder the rest of a line), surrogate, private-use or
/// unassigned character, no separator but the plain space; and none of the assigned
/// characters that show as nothing ([`blank`]).
pub fn printable(c: char) -> bool {
    match c.general_category() {
        GeneralCategory::Control
        | GeneralCategory::Format
        | GeneralCategory::Surrogate
        | GeneralCategory::PrivateUse
        | GeneralCategory::Unassigned
        | GeneralCategory::LineSeparator
        | GeneralCategory::ParagraphSeparator => false,
        GeneralCategory::SpaceSeparator => c == ' ',
        _ => !blank(c),
    }
}

/// Letters, marks and symbols that are drawn as nothing: Hangul fillers, the braille
/// blank, the combining grapheme joiner, Khmer inherent vowels, Mongolian and other
/// variation selectors.
pub fn blank(c: char) -> bool {
    matches!(c as u32,
        0x034F | 0x115F | 0x1160 | 0x17B4 | 0x17B5 | 0x180B..=0x180F | 0x2800 | 0x3164
        | 0xFE00..=0xFE0F | 0xFFA0 | 0xE0100..=0xE01EF)
}

/// A combining mark (it draws on the character before it).
pub fn is_mark(c: char) -> bool {
    c.general_category_group() == GeneralCategoryGroup::Mark
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
            '\u{1b}',
            '\u{7}',
            '\n',
            '\r',
            '\u{9b}',
            '\u{7f}',
            '\u{200b}',
            '\u{202e}',
            '\u{feff}',
            '\u{e000}',
            '\t',
            '\u{a0}',
            '\u{2800}',
            '\u{180b}',
            '\u{600}',
            '\u{70f}',
            '\u{13430}',
            '\u{1bca0}',
            '\u{1d173}',
            '\u{3164}',
            '\u{2028}',
            '\u{e0001}',
            '\u{378}',
            '\u{fffe}',
            '\u{f0000}',
        ] {
            assert!(!printable(c), "U+{:04X}", c as u32);
        }
    }
}
