//! Naming a game on the command line or in the picker. Game ids are UUID v7s: too long to
//! type, and their first digits are a timestamp shared by the games of the same minute.
//! A game is shown by its *short id*, the last 8 hex digits (random), and may be named by
//! its full id or by its short id; a short id is resolved against the live games.

use protocol::wire::{GameId, GameSummary};

/// How a game is shown to people: `#` and the last 8 hex digits of its id.
pub fn short_id(id: GameId) -> String {
    let simple = id.simple().to_string();
    format!("#{}", &simple[simple.len() - 8..])
}

/// What a person typed to name a game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GameRef {
    Full(GameId),
    /// Hex digits (at least 4, lower case) that end the id of exactly one live game.
    Short(String),
    /// The code of a private game (`tamsk watch --code`): the server finds the game.
    Code(String),
}

impl GameRef {
    /// Reads a full id (any UUID form) or a short id with or without its `#`.
    pub fn parse(text: &str) -> Result<GameRef, String> {
        let text = text.trim();
        if let Ok(id) = text.parse::<GameId>() {
            return Ok(GameRef::Full(id));
        }
        let short = text.trim_start_matches('#').to_ascii_lowercase();
        if (4..=12).contains(&short.len()) && short.chars().all(|c| c.is_ascii_hexdigit()) {
            Ok(GameRef::Short(short))
        } else {
            Err(format!(
                "'{}' is not a game: give its short id (such as #3f9a0c1d) or its full id",
                crate::sanitize::clean(text)
            ))
        }
    }

    /// How it reads in a message: the full id, or `#` and the short id.
    pub fn name(&self) -> String {
        match self {
            GameRef::Full(id) => id.to_string(),
            GameRef::Short(short) => format!("#{short}"),
            GameRef::Code(code) => format!("with the code {}", crate::sanitize::clean(code)),
        }
    }

    /// The one game of `games` this names.
    pub fn resolve(&self, games: &[GameSummary]) -> Result<GameId, String> {
        self.resolve_ids(games.iter().map(|g| g.game))
            .map_err(|e| format!("{e} among the live games"))
    }

    /// The one id of `ids` this names.
    pub fn resolve_ids(&self, ids: impl Iterator<Item = GameId>) -> Result<GameId, String> {
        let short = match self {
            GameRef::Full(id) => return Ok(*id),
            GameRef::Short(short) => short,
            GameRef::Code(_) => return Err("a private game is found by the server".into()),
        };
        let mut found = ids.filter(|id| id.simple().to_string().ends_with(short.as_str()));
        match (found.next(), found.next()) {
            (Some(id), None) => Ok(id),
            (None, _) => Err(format!("No game #{short}")),
            (Some(_), Some(_)) => Err(format!(
                "#{short} names more than one game (give more of its digits)"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(text: &str) -> GameId {
        text.parse().unwrap()
    }

    #[test]
    fn a_short_id_is_the_random_tail() {
        let g = id("0193a3f0-7c1e-7000-8000-00003f9a0c1d");
        assert_eq!(short_id(g), "#3f9a0c1d");
        assert_eq!(
            GameRef::parse("#3F9A0C1D"),
            Ok(GameRef::Short("3f9a0c1d".into()))
        );
        assert_eq!(
            GameRef::parse("0193a3f0-7c1e-7000-8000-00003f9a0c1d"),
            Ok(GameRef::Full(g))
        );
        assert!(GameRef::parse("12").unwrap_err().contains("not a game"));
        assert!(GameRef::parse("zzzz").is_err());
    }
}
