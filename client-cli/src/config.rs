//! The small config file: the last server and name used, and per server the player's
//! secret token and the game he is seated in, so that a restarted client takes the same
//! seat again.
//!
//! Where: `$TAMSK_CONFIG` if set, else `$XDG_CONFIG_HOME/tamsk/config.json`, else
//! `~/.config/tamsk/config.json`. Written atomically (a temporary file renamed over it),
//! readable by its owner only on Unix since it holds tokens.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The local server `tamsk-server` listens on by default.
pub const DEFAULT_SERVER: &str = "ws://127.0.0.1:7878/ws";

/// The whole file.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Config {
    /// The server used last (the default for the next run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// The display name used last.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Per server URL.
    #[serde(default)]
    pub accounts: BTreeMap<String, Account>,
}

/// Who we are on one server.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Account {
    pub name: String,
    pub player_id: String,
    pub token: String,
    /// The live game we have a seat in, to take it again after a restart.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "game_or_none"
    )]
    pub game: Option<protocol::wire::GameId>,
}

/// A game id written by an older client (a number) names no game any more: it is read as
/// none rather than making the whole file unreadable.
fn game_or_none<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<protocol::wire::GameId>, D::Error> {
    let value = Option::<serde_json::Value>::deserialize(d)?;
    Ok(value.and_then(|v| v.as_str().and_then(|s| s.parse().ok())))
}

/// Where the config file is.
pub fn default_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("TAMSK_CONFIG").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    let dir = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(dir.join("tamsk").join("config.json"))
}

impl Config {
    /// Reads the file; a missing file is an empty config, a broken one an error.
    pub fn load(path: &Path) -> anyhow::Result<Config> {
        match std::fs::read_to_string(path) {
            Ok(text) => serde_json::from_str(&text)
                .map_err(|e| anyhow::anyhow!("{}: not a tamsk config file: {e}", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Config::default()),
            Err(e) => Err(anyhow::anyhow!("cannot read {}: {e}", path.display())),
        }
    }

    /// Writes the file (creating its directory), replacing it atomically.
    pub fn save(&self, path: &Path) -> anyhow::Result<()> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", dir.display()))?;
        }
        let tmp = path.with_extension("json.tmp");
        let text = serde_json::to_string_pretty(self).expect("config serialises") + "\n";
        write_private(&tmp, text.as_bytes())
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", tmp.display()))?;
        std::fs::rename(&tmp, path)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
        Ok(())
    }

    pub fn account(&self, server: &str) -> Option<&Account> {
        self.accounts.get(server)
    }
}

#[cfg(unix)]
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    f.write_all(bytes)
}

#[cfg(not(unix))]
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    std::fs::write(path, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A config path in a directory of its own (removed when the guard drops), under a
    /// folder that does not exist yet.
    fn temp() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("sub").join("config.json");
        (dir, path)
    }

    #[test]
    fn round_trip_and_missing_file() {
        let (_dir, path) = temp();
        assert_eq!(Config::load(&path).unwrap(), Config::default());
        let mut c = Config {
            server: Some("ws://x/ws".into()),
            name: Some("Alice".into()),
            ..Config::default()
        };
        c.accounts.insert(
            "ws://x/ws".into(),
            Account {
                name: "Alice".into(),
                player_id: "p1".into(),
                token: "t1".into(),
                game: Some(protocol::wire::GameId::from_u64_pair(0, 4)),
            },
        );
        c.save(&path).unwrap();
        assert_eq!(Config::load(&path).unwrap(), c);
        assert_eq!(
            c.account("ws://x/ws").unwrap().game,
            Some(protocol::wire::GameId::from_u64_pair(0, 4))
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600, "tokens are private");
        }
    }

    #[test]
    fn a_broken_file_is_an_error_naming_it() {
        let (_dir, path) = temp();
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "{not json").unwrap();
        let e = Config::load(&path).unwrap_err().to_string();
        assert!(
            e.contains("config.json") && e.contains("not a tamsk config"),
            "{e}"
        );
    }
}
