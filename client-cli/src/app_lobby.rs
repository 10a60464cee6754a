//! The lobby (`tamsk lobby`, full screen): the open seeks, the live games with their
//! watchers and who is online, refreshed every few seconds; Enter accepts the chosen seek
//! (the game starts at once), watches the chosen game, or challenges the chosen player
//! (Level 3, standard time control).

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent};
use protocol::settings::Level;
use protocol::wire::{ClientMessage, GameSummary, PlayerRef, SeekInfo};
use ratatui::layout::Rect;
use ratatui::style::{Color, Style, Stylize};
use ratatui::text::Line;
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use super::{App, Find, Mode, Phase};
use crate::sanitize::clean;
use crate::ui::short_settings;

/// How often the lobby asks for its lists again.
pub const LOBBY_POLL: Duration = Duration::from_secs(2);

/// What the lobby asks for: seeks, live games, who is online.
const LOBBY_LISTS: [ClientMessage; 3] = [
    ClientMessage::ListSeeks,
    ClientMessage::ListGames,
    ClientMessage::ListPlayers,
];

/// What a line of the lobby offers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Entry {
    Seek(SeekInfo),
    Game(GameSummary),
    Player(PlayerRef),
}

impl App {
    /// The lobby's choices, seeks first (other players' only: one's own cannot be taken).
    pub fn lobby_entries(&self) -> Vec<Entry> {
        let mine = self.me.as_ref().map(|m| m.player_id.as_str());
        let seeks = self
            .seeks
            .iter()
            .filter(|s| Some(s.player.player_id.as_str()) != mine)
            .cloned()
            .map(Entry::Seek);
        let games = self.games.iter().cloned().map(Entry::Game);
        let players = self
            .online
            .iter()
            .filter(|p| Some(p.player_id.as_str()) != mine)
            .cloned()
            .map(Entry::Player);
        seeks.chain(games).chain(players).collect()
    }

    /// How many other players are online: the server's count includes us (the list we
    /// show leaves us out, so the count does too).
    pub fn others_online(&self) -> u32 {
        self.online_count
            .saturating_sub(u32::from(self.me.is_some()))
    }

    /// Welcomed in lobby mode: ask for both lists.
    pub(crate) fn enter_lobby(&mut self, at: Instant) -> Vec<ClientMessage> {
        self.phase = Phase::Lobby;
        self.lobby_poll = Some(at);
        LOBBY_LISTS.to_vec()
    }

    /// Back in the lobby after a failed try: the lists at once.
    pub(crate) fn back_to_lobby(&mut self) -> Vec<ClientMessage> {
        self.phase = Phase::Lobby;
        LOBBY_LISTS.to_vec()
    }

    /// A seek taken or a challenge sent from the lobby came to nothing: back in the
    /// lobby, with `text` on the status line; its lists are asked for on the next tick.
    pub(crate) fn return_to_lobby(&mut self, kind: super::LogKind, text: String) {
        self.mode = Mode::Lobby;
        self.phase = Phase::Lobby;
        self.from_lobby = false;
        self.challenge_sent = None;
        self.lobby_poll = None;
        self.status = Some((kind, text));
    }

    /// On a tick in the lobby: the lists again, every [`LOBBY_POLL`].
    pub(crate) fn lobby_tick(&mut self, at: Instant) -> Vec<ClientMessage> {
        if self
            .lobby_poll
            .is_some_and(|t| at.saturating_duration_since(t) < LOBBY_POLL)
        {
            return Vec::new();
        }
        self.enter_lobby(at)
    }

    pub(crate) fn lobby_games(&mut self, mut games: Vec<GameSummary>) {
        games.retain(|g| g.state == "playing");
        self.games = games;
        self.clamp_pick();
    }

    pub(crate) fn lobby_seeks(&mut self, seeks: Vec<SeekInfo>) {
        self.seeks = seeks;
        self.clamp_pick();
    }

    pub(crate) fn lobby_players(&mut self, players: Vec<PlayerRef>, online: u32) {
        self.online = players;
        self.online_count = online;
        self.clamp_pick();
    }

    fn clamp_pick(&mut self) {
        self.pick = self.pick.min(self.lobby_entries().len().saturating_sub(1));
    }

    pub(crate) fn lobby_key(&mut self, key: KeyEvent) -> Vec<ClientMessage> {
        let entries = self.lobby_entries();
        match key.code {
            KeyCode::Up | KeyCode::Char('k') => self.pick = self.pick.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => {
                self.pick = (self.pick + 1).min(entries.len().saturating_sub(1))
            }
            KeyCode::Char('q') | KeyCode::Esc => self.quit = true,
            KeyCode::Enter => match entries.get(self.pick) {
                Some(Entry::Seek(s)) => {
                    // From now on a player of these settings: `new` after the game seeks
                    // the same ones.
                    self.mode = Mode::Play {
                        settings: s.settings.clone(),
                        find: Find::Seek,
                    };
                    self.phase = Phase::Seeking;
                    self.from_lobby = true;
                    self.hint(format!("Taking {}'s seek…", clean(&s.player.name)));
                    return vec![ClientMessage::AcceptSeek { seek: s.seek }];
                }
                Some(Entry::Game(g)) => return self.watch(g.game),
                Some(Entry::Player(p)) => {
                    self.mode = Mode::Play {
                        settings: crate::tc::TimeControl::Standard.settings(Level::Three),
                        find: Find::Challenge(p.player_id.clone()),
                    };
                    self.from_lobby = true;
                    self.hint(format!("Challenging {}…", clean(&p.name)));
                    return self.find_game();
                }
                None => {}
            },
            _ => {}
        }
        Vec::new()
    }
}

/// One line of the lobby, at most `width` columns.
pub(crate) fn entry_line(e: &Entry, width: usize) -> String {
    let line = match e {
        Entry::Seek(s) => format!(
            "seek   {:<16} {}{}",
            super::with_rating(&s.player.name, s.player.rating),
            short_settings(&s.settings),
            if s.rated { " rated" } else { "" }
        ),
        Entry::Game(g) => format!(
            "{} {} vs {}  {}  {} moves  {} watching",
            crate::gameref::short_id(g.game),
            super::with_rating(&g.red.name, g.red.rating),
            super::with_rating(&g.black.name, g.black.rating),
            short_settings(&g.settings),
            g.move_count,
            g.watchers
        ),
        Entry::Player(p) => format!("player {}", clean(&p.name)),
    };
    line.chars().take(width).collect()
}

/// A part of the lobby: its title, what it says when empty, which entries it lists.
type Section<'a> = (&'a str, &'a str, fn(&Entry) -> bool);

/// The lobby's body: open seeks, live games, who is online; the chosen line highlighted
/// and kept in view.
pub fn draw_lobby(frame: &mut Frame, area: Rect, app: &App) {
    let entries = app.lobby_entries();
    let width = area.width.saturating_sub(2) as usize;
    let online = format!(
        "Online besides you ({}): Enter challenges (Level 3, standard)",
        app.others_online()
    );
    let sections: [Section; 3] = [
        (
            "Open seeks: Enter plays at once",
            "  none (tamsk play opens one)",
            |e| matches!(e, Entry::Seek(_)),
        ),
        ("Live games: Enter watches", "  none", |e| {
            matches!(e, Entry::Game(_))
        }),
        (&online, "  nobody else", |e| matches!(e, Entry::Player(_))),
    ];
    let mut lines = Vec::new();
    let mut picked_line = 0;
    for (n, (title, empty, of)) in sections.into_iter().enumerate() {
        if n > 0 {
            lines.push(Line::raw(""));
        }
        lines.push(Line::styled(title.to_string(), Style::new().bold()));
        let mut any = false;
        for (i, e) in entries.iter().enumerate().filter(|(_, e)| of(e)) {
            any = true;
            let text = entry_line(e, width);
            lines.push(if i == app.pick {
                picked_line = lines.len();
                Line::styled(
                    format!("▶ {text}"),
                    Style::new().fg(Color::Black).bg(Color::Yellow),
                )
            } else {
                Line::raw(format!("  {text}"))
            });
        }
        if !any {
            lines.push(Line::raw(empty.to_string()).dim());
        }
    }
    let scroll = (picked_line + 1).saturating_sub(area.height as usize) as u16;
    frame.render_widget(Paragraph::new(lines).scroll((scroll, 0)), area);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::gid;
    use crate::testing::welcome;
    use crossterm::event::KeyModifiers;
    use protocol::settings::{Level, Settings};
    use protocol::wire::GameId;
    use protocol::wire::{GameSummary, LobbyMessage, PlayerRef, ServerMessage, PROTOCOL_VERSION};
    use ratatui::backend::TestBackend;
    use ratatui::Terminal;

    fn player(id: &str, name: &str) -> PlayerRef {
        PlayerRef {
            player_id: id.into(),
            name: name.into(),
            rating: None,
        }
    }

    fn game(game: GameId, red: &str, black: &str, watchers: u32, state: &str) -> GameSummary {
        GameSummary {
            game,
            level: Level::Three,
            settings: Settings::level(Level::Three),
            red: player(&format!("id-{red}"), red),
            black: player(&format!("id-{black}"), black),
            move_count: 14,
            watchers,
            state: state.into(),
            rated: false,
            tc: None,
        }
    }

    fn seek(seek: u64, who: PlayerRef, level: Level) -> SeekInfo {
        SeekInfo {
            seek,
            player: who,
            settings: Settings::level(level),
            since_ms: 0,
            rated: false,
        }
    }

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    /// Rita in the lobby: Bert's seek and her own, two live games and a finished one.
    fn lobby(t0: Instant) -> App {
        let mut app = App::new(Mode::Lobby, "Rita".into(), None, t0);
        let hello = app.on_connected(t0);
        // The lobby may take a seek: a player, not a guest.
        assert!(matches!(
            &hello[0],
            ClientMessage::Hello { name: Some(n), guest: false, .. } if n == "Rita"
        ));
        let sent = app.on_message(welcome(vec![]), t0);
        assert!(sent.contains(&ClientMessage::ListSeeks), "{sent:?}");
        assert!(sent.contains(&ClientMessage::ListGames), "{sent:?}");
        assert!(sent.contains(&ClientMessage::ListPlayers), "{sent:?}");
        assert_eq!(app.phase, Phase::Lobby);
        app.on_lobby(
            LobbyMessage::Seeks {
                seeks: vec![
                    seek(7, player("id-bert", "Bert"), Level::Two),
                    seek(8, player("p1", "Rita"), Level::One),
                ],
            },
            t0,
        );
        app.on_message(
            ServerMessage::Games {
                games: vec![
                    game(gid(3), "Ann", "Bo", 2, "playing"),
                    game(gid(4), "Cy", "TAMSK bot", 0, "playing"),
                    game(gid(2), "Di", "Ed", 5, "finished"),
                ],
            },
            t0,
        );
        app.on_lobby(
            LobbyMessage::Players {
                players: vec![player("id-bert", "Bert"), player("p1", "Rita")],
                online: 2,
            },
            t0,
        );
        app
    }

    #[test]
    fn the_lobby_lists_other_players_seeks_and_live_games() {
        let t0 = Instant::now();
        let app = lobby(t0);
        let entries = app.lobby_entries();
        let ids: Vec<String> = entries
            .iter()
            .map(|e| match e {
                Entry::Seek(s) => format!("seek {}", s.seek),
                Entry::Game(g) => format!("game {}", crate::gameref::short_id(g.game)),
                Entry::Player(p) => format!("player {}", p.name),
            })
            .collect();
        // Not Rita's own seek, not the finished game, not Rita herself.
        assert_eq!(
            ids,
            ["seek 7", "game #00000003", "game #00000004", "player Bert"]
        );
    }

    #[test]
    fn enter_on_a_player_online_challenges_him() {
        let t0 = Instant::now();
        let mut app = lobby(t0);
        for _ in 0..3 {
            app.on_key(key(KeyCode::Down), t0);
        }
        let sent = app.on_key(key(KeyCode::Enter), t0);
        let standard = crate::tc::TimeControl::Standard.settings(Level::Three);
        assert_eq!(
            sent,
            [ClientMessage::Challenge {
                to: "id-bert".into(),
                settings: standard,
                rated: None
            }]
        );
        assert_eq!(app.phase, Phase::Seeking);
    }

    #[test]
    fn enter_takes_a_seek_or_watches_a_game() {
        let t0 = Instant::now();
        let mut app = lobby(t0);
        let sent = app.on_key(key(KeyCode::Enter), t0);
        assert_eq!(sent, [ClientMessage::AcceptSeek { seek: 7 }]);
        assert_eq!(
            app.mode,
            Mode::Play {
                settings: Settings::level(Level::Two),
                find: Find::Seek
            }
        );

        // Somebody was quicker: back in the lobby, told why, with fresh lists.
        let sent = app.on_message(ServerMessage::error("unknown_seek", "no open seek 7"), t0);
        assert_eq!(app.phase, Phase::Lobby);
        assert_eq!(app.mode, Mode::Lobby);
        assert!(sent.contains(&ClientMessage::ListSeeks), "{sent:?}");
        assert!(app
            .status
            .as_ref()
            .is_some_and(|(_, s)| s.contains("no open seek")));

        let mut app = lobby(t0);
        for _ in 0..5 {
            app.on_key(key(KeyCode::Down), t0);
        }
        assert_eq!(app.pick, 3, "the last line is as far as it goes");
        app.on_key(key(KeyCode::Up), t0);
        let sent = app.on_key(key(KeyCode::Enter), t0);
        assert_eq!(
            sent,
            [ClientMessage::Watch {
                game: gid(4),
                after_seq: None
            }]
        );
        assert_eq!(app.phase, Phase::Joining(gid(4)));
    }

    #[test]
    fn the_lists_are_asked_for_again_every_two_seconds() {
        let t0 = Instant::now();
        let mut app = lobby(t0);
        let lists = |sent: &[ClientMessage]| {
            sent.iter()
                .filter(|m| {
                    matches!(
                        m,
                        ClientMessage::ListGames
                            | ClientMessage::ListSeeks
                            | ClientMessage::ListPlayers
                    )
                })
                .count()
        };
        assert_eq!(lists(&app.on_tick(t0 + Duration::from_millis(1_900))), 0);
        assert_eq!(lists(&app.on_tick(t0 + LOBBY_POLL)), 3);
        // A game that ended leaves the list; the pick stays on a line that exists.
        app.pick = 3;
        app.on_message(
            ServerMessage::Games {
                games: vec![game(gid(3), "Ann", "Bo", 3, "playing")],
            },
            t0,
        );
        assert_eq!(app.pick, 2);
        assert_eq!(PROTOCOL_VERSION, 1);
    }

    /// Rita in the lobby challenges Bert (the player online, Enter); the server sends it.
    fn challenging_bert(t0: Instant) -> App {
        let mut app = lobby(t0);
        for _ in 0..3 {
            app.on_key(key(KeyCode::Down), t0);
        }
        app.on_key(key(KeyCode::Enter), t0);
        app.on_lobby(
            LobbyMessage::ChallengeSent {
                challenge: 9,
                to: player("id-bert", "Bert"),
                settings: crate::tc::TimeControl::Standard.settings(Level::Three),
                expires_ms: 60_000,
                rated: false,
            },
            t0,
        );
        assert_eq!(app.phase, Phase::Seeking);
        app
    }

    #[test]
    fn a_challenge_declined_from_the_lobby_goes_back_to_the_lobby() {
        let t0 = Instant::now();
        let mut app = challenging_bert(t0);
        app.on_lobby(
            LobbyMessage::ChallengeClosed {
                challenge: 9,
                reason: "declined".into(),
            },
            t0,
        );
        assert!(!app.quit, "the lobby stays open");
        assert_eq!(app.exit_code, 0);
        assert_eq!((&app.phase, &app.mode), (&Phase::Lobby, &Mode::Lobby));
        assert_eq!(
            app.status.as_ref().map(|(_, t)| t.as_str()),
            Some("No game: the challenge to Bert was declined")
        );
        // Its lists are asked for again at once, and every two seconds after.
        let sent = app.on_tick(t0 + Duration::from_millis(50));
        assert!(sent.contains(&ClientMessage::ListPlayers), "{sent:?}");
        let mut terminal = Terminal::new(TestBackend::new(80, 24)).unwrap();
        terminal.draw(|f| crate::ui::ui(f, &app, t0)).unwrap();
        let text = format!("{}", terminal.backend());
        assert!(
            text.contains("the challenge to Bert was declined"),
            "{text}"
        );
        assert!(text.contains("Open seeks"), "{text}");
        // Enter challenges him again.
        app.pick = 3;
        let sent = app.on_key(key(KeyCode::Enter), t0);
        assert!(matches!(&sent[..], [ClientMessage::Challenge { to, .. }] if to == "id-bert"));
    }

    #[test]
    fn a_challenge_refused_by_the_server_from_the_lobby_goes_back_too() {
        let t0 = Instant::now();
        let mut app = lobby(t0);
        for _ in 0..3 {
            app.on_key(key(KeyCode::Down), t0);
        }
        app.on_key(key(KeyCode::Enter), t0);
        let sent = app.on_message(
            ServerMessage::error("unknown_player", "Bert is not online"),
            t0,
        );
        assert!(!app.quit);
        assert_eq!(app.phase, Phase::Lobby);
        assert!(sent.contains(&ClientMessage::ListPlayers), "{sent:?}");
        assert_eq!(
            app.status.clone(),
            Some((
                super::super::LogKind::Error,
                "No game: Bert is not online".into()
            ))
        );
    }

    #[test]
    fn a_closed_challenge_names_the_challenger_not_its_number() {
        let t0 = Instant::now();
        let mut app = lobby(t0);
        app.on_lobby(
            LobbyMessage::Challenged {
                challenge: 2,
                from: player("id-carol", "Carol"),
                settings: Settings::level(Level::Three),
                expires_ms: 60_000,
                rated: false,
            },
            t0,
        );
        // Declined with 'n': the server then closes it.
        let sent = app.on_key(key(KeyCode::Char('n')), t0);
        assert_eq!(sent, [ClientMessage::DeclineChallenge { challenge: 2 }]);
        app.take_output();
        app.on_lobby(
            LobbyMessage::ChallengeClosed {
                challenge: 2,
                reason: "declined".into(),
            },
            t0,
        );
        let out = app.take_output();
        assert_eq!(out[0].text, "The challenge from Carol is closed: declined");
        assert!(!out[0].text.contains('2'), "no internal number");
        assert_eq!(app.log.last().unwrap().text, out[0].text);
    }

    #[test]
    fn the_online_count_leaves_us_out_as_the_list_does() {
        let t0 = Instant::now();
        let app = lobby(t0);
        // Rita and Bert are online: the list shows Bert, the count says 1.
        assert_eq!(app.online_count, 2);
        assert_eq!(app.others_online(), 1);
        let listed = app
            .lobby_entries()
            .iter()
            .filter(|e| matches!(e, Entry::Player(_)))
            .count();
        assert_eq!(listed as u32, app.others_online());
        let mut terminal = Terminal::new(TestBackend::new(80, 24)).unwrap();
        terminal.draw(|f| crate::ui::ui(f, &app, t0)).unwrap();
        let text = format!("{}", terminal.backend());
        assert!(text.contains("Online besides you (1)"), "{text}");
    }

    #[test]
    fn the_lobby_at_80x24() {
        let t0 = Instant::now();
        let mut app = lobby(t0);
        app.on_key(key(KeyCode::Down), t0);
        let mut terminal = Terminal::new(TestBackend::new(80, 24)).unwrap();
        terminal.draw(|f| crate::ui::ui(f, &app, t0)).unwrap();
        insta::assert_snapshot!("lobby", terminal.backend());
    }
}
