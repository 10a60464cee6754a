//! `docs/protocol.schema.json` is generated from the wire types and must stay in sync;
//! `docs/PROTOCOL.md` must document every message.

use std::path::PathBuf;

fn docs() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs")
}

/// The `type` tags of one message enum, read from the schema.
fn tags(schema: &serde_json::Value, def: &str) -> Vec<String> {
    let variants = schema["definitions"][def]["oneOf"]
        .as_array()
        .unwrap_or_else(|| panic!("{def} has variants"));
    variants
        .iter()
        .map(|v| {
            let ty = &v["properties"]["type"];
            ty["enum"][0]
                .as_str()
                .or_else(|| ty["const"].as_str())
                .unwrap_or_else(|| panic!("a tag in {v}"))
                .to_string()
        })
        .collect()
}

#[test]
fn schema_file_is_in_sync_with_the_types() {
    let path = docs().join("protocol.schema.json");
    let fresh = serde_json::to_string_pretty(&protocol::wire::json_schema()).unwrap() + "\n";
    if std::env::var_os("UPDATE_SCHEMA").is_some() {
        std::fs::write(&path, &fresh).expect("write the schema");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == fresh,
        "docs/protocol.schema.json is out of date with protocol::wire. Regenerate it with\n\
         \n    UPDATE_SCHEMA=1 cargo test -p tamsk-tests --test protocol_doc\n\n\
         and commit it (and describe the change in docs/PROTOCOL.md)."
    );
}

#[test]
fn protocol_doc_names_every_message() {
    let schema = protocol::wire::json_schema();
    let doc = std::fs::read_to_string(docs().join("PROTOCOL.md")).expect("docs/PROTOCOL.md");
    let client = tags(&schema, "ClientMessage");
    assert_eq!(client, server::request::CLIENT_TYPES.to_vec());
    let lobby = tags(&schema, "LobbyMessage");
    for tag in client
        .iter()
        .chain(&tags(&schema, "ServerMessage"))
        .chain(&lobby)
    {
        assert!(
            doc.contains(&format!("`{tag}`")),
            "docs/PROTOCOL.md does not describe `{tag}`"
        );
    }
    assert!(doc.contains(&format!("version {}", protocol::wire::PROTOCOL_VERSION)));
}

/// Every numeric setting's range, unit and default in `docs/PROTOCOL.md` is the one of
/// `protocol::settings::RANGES` (which validation and the schema use), and the schema
/// states the same bounds.
#[test]
fn protocol_doc_states_every_settings_range() {
    let doc = std::fs::read_to_string(docs().join("PROTOCOL.md")).expect("docs/PROTOCOL.md");
    let schema = protocol::wire::json_schema();
    for r in protocol::settings::RANGES {
        let row = format!(
            "| `{}` | {}..={} | {} | {} | {} |",
            r.name,
            r.min,
            r.max,
            protocol::settings::UNIT,
            r.default,
            if r.player {
                "yes"
            } else {
                "no: fixed by the rules page"
            },
        );
        assert!(
            doc.lines().any(|l| l.starts_with(&row)),
            "docs/PROTOCOL.md has no settings row starting with\n{row}"
        );
        let (def, field) = match r.name.split_once('.') {
            Some((_, inner)) => ("GameClock", inner),
            None => ("Settings", r.name),
        };
        let prop = &schema["definitions"][def]["properties"][field];
        assert_eq!(prop["minimum"], r.min as f64, "{}: {prop}", r.name);
        assert_eq!(prop["maximum"], r.max as f64, "{}: {prop}", r.name);
        let player = &schema["definitions"]["PlayerSettings"]["properties"];
        assert_eq!(
            player.get(r.name).is_some() || r.name.contains('.'),
            r.player,
            "{}: a player's choice in the schema iff in the table",
            r.name
        );
    }
}

/// Every field of a snapshot's `view` (the stable view of a game) has its row in
/// `docs/PROTOCOL.md`.
#[test]
fn protocol_doc_describes_every_field_of_the_view() {
    let doc = std::fs::read_to_string(docs().join("PROTOCOL.md")).expect("docs/PROTOCOL.md");
    let schema = protocol::wire::json_schema();
    let fields = schema["definitions"]["GameView"]["properties"]
        .as_object()
        .expect("GameView has properties");
    assert!(fields.len() >= 15, "{fields:?}");
    for field in fields.keys() {
        let row = format!("| `{field}` |");
        assert!(
            doc.lines().any(|l| l.starts_with(&row)),
            "docs/PROTOCOL.md does not describe view.{field} (a row starting with {row})"
        );
    }
}
