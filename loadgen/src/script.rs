//! The scripted clients: a player that keeps a replica of its game and plays the first
//! sensible legal move when its slot comes (seeking again when a game ends), and a
//! watcher that follows its slot's games; both time what reaches them.

use super::*;

pub(crate) type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// Opens a connection (no Nagle delay) and says hello. `gate` limits how many connect at
/// once; the permit is held only while connecting.
pub(crate) async fn connect(url: &str, name: &str, gate: &Semaphore) -> Result<Ws> {
    let _permit = gate.acquire().await.expect("the gate is never closed");
    let (mut ws, _) =
        tokio_tungstenite::connect_async_with_config(url, Some(socket_config()), true)
            .await
            .with_context(|| format!("connecting to {url}"))?;
    send(
        &mut ws,
        &ClientMessage::Hello {
            version: PROTOCOL_VERSION,
            name: Some(name.into()),
            token: None,
            guest: false,
        },
    )
    .await?;
    Ok(ws)
}

/// 4 KiB read and write buffers, as the relay yardstick's load generator has them
/// (`../shared/bench/relay`, `--buf-kib 4`). tungstenite's default read buffer is
/// 128 KiB, and it fills the buffer's spare room with zeros before every read: with 4,000
/// sockets that memset was 43% of this generator's CPU (`perf`), which took a core's
/// share from the server it measures and delayed the arrivals it times.
fn socket_config() -> tokio_tungstenite::tungstenite::protocol::WebSocketConfig {
    tokio_tungstenite::tungstenite::protocol::WebSocketConfig::default()
        .read_buffer_size(4 * 1024)
        .write_buffer_size(4 * 1024)
}

pub(crate) async fn send(ws: &mut Ws, msg: &ClientMessage) -> Result<()> {
    ws.send(Message::text(serde_json::to_string(msg)?)).await?;
    Ok(())
}

/// A frame from the server: an event (nearly all the traffic) is read for its entry
/// only (a `play`'s, or a `lag` change's: the replica needs both); the rest is read whole.
pub(crate) enum Incoming {
    Event { game: GameId, entry: Option<Entry> },
    Message(ServerMessage),
}

/// The next server frame, answering pings on the way. `None` when the socket closed.
pub(crate) async fn next(ws: &mut Ws) -> Result<Option<Incoming>> {
    while let Some(frame) = ws.next().await {
        let text = match frame? {
            Message::Text(t) => t,
            Message::Close(_) => return Ok(None),
            _ => continue,
        };
        let msg: ServerMessage =
            serde_json::from_str(&text).context("server sent something unreadable")?;
        match msg {
            ServerMessage::Ping { nonce, .. } => {
                send(ws, &ClientMessage::Pong { nonce }).await?;
                continue;
            }
            ServerMessage::Event(ev) => {
                return Ok(Some(Incoming::Event {
                    game: ev.game,
                    entry: ev.entry(),
                }))
            }
            msg => return Ok(Some(Incoming::Message(msg))),
        }
    }
    Ok(None)
}

pub(crate) fn micros_since(epoch: Instant) -> u64 {
    epoch.elapsed().as_micros() as u64
}

/// What a scripted player does now: when nobody can move any more, the last drop or claim
/// (so the game ends at once); on its turn, a legal whole move with a drop that does not
/// walk onto a full socket.
fn choose(replica: &Replica, me: Player, turn_count: u64) -> Option<Action> {
    let game = &replica.game;
    if game.is_ending() {
        let legal = game.legal_actions(me);
        return legal
            .into_iter()
            .find(|a| matches!(a, Action::Drop | Action::Claim));
    }
    if game.turn() != me || game.held().is_some() {
        return None;
    }
    // A glass about to run out may die before the move arrives: the server would refuse
    // the move (`hourglass_dead`), rightly, so it is not chosen.
    let soon = replica.now_ms() + 500;
    let moves: Vec<Action> = game
        .legal_actions(me)
        .into_iter()
        .filter(|a| match a {
            Action::Move {
                from,
                to,
                drop: true,
            } => {
                !game.is_full(*to)
                    && game
                        .occupant(*from)
                        .and_then(|g| game.glass(g).death_at())
                        .is_none_or(|dies| dies > soon)
            }
            Action::Place { drop: true, .. } => true,
            _ => false,
        })
        .collect();
    (!moves.is_empty()).then(|| moves[turn_count as usize % moves.len()])
}

/// A player's copy of its game, fed with each event's entry, and when it last heard.
struct Replica {
    game: Game,
    synced: Instant,
}

impl Replica {
    fn new(game: Game) -> Replica {
        Replica {
            game,
            synced: Instant::now(),
        }
    }

    fn apply(&mut self, entry: &Entry) {
        entry.apply_to(&mut self.game).ok();
        self.synced = Instant::now();
    }

    /// The game's time now, as far as this replica can tell.
    fn now_ms(&self) -> u64 {
        self.game.now() + self.synced.elapsed().as_millis() as u64
    }
}

/// A scripted player: seeks, plays its seat at the slot's pace, seeks again after the end.
/// A player: connects to node `home` and seeks there (see [`nodes`]).
pub(crate) async fn player(
    args: Arc<Args>,
    settings: Settings,
    slot: Arc<Slot>,
    (index, home): (usize, usize),
    (epoch, stop): (Instant, Instant),
    gate: Arc<Semaphore>,
) -> Result<Tally> {
    let mut ws = connect(&args.server[home], &format!("load{index}"), &gate).await?;
    let interval = Duration::from_secs_f64(args.games as f64 / args.rate);
    let mut tally = Tally {
        opponent: Some(histogram()),
        ..Tally::default()
    };
    let mut turn_count = index as u64;
    'games: while Instant::now() < stop {
        let Some(s) = nodes::seek(&mut ws, &settings, stop, &mut tally).await? else {
            break 'games;
        };
        let (game_id, seat, mut replica) = (
            s.game,
            s.seat.context("a player's snapshot has a seat")?,
            Replica::new(s.view.replica()?),
        );
        tally.games += 1;
        if seat == Player::Red {
            slot.game.send_replace(Some(game_id));
        }
        let mut next_move_at = Instant::now() + interval;
        loop {
            // My turn and nothing in flight: wait for my slot, then move.
            if replica.game.is_playing() && choose(&replica, seat, turn_count).is_some() {
                let wait = tokio::time::sleep_until(next_move_at.into());
                tokio::select! {
                    _ = wait => {
                        if let Some(action) = choose(&replica, seat, turn_count) {
                            turn_count += 1;
                            let now_us = micros_since(epoch);
                            slot.sent_us.store(now_us, Ordering::Release);
                            send(&mut ws, &ClientMessage::Act { game: game_id, action, seq: None }).await?;
                            if slot.measuring(now_us) {
                                tally.moves += 1;
                            }
                            next_move_at += interval * 2;
                            next_move_at = next_move_at.max(Instant::now());
                            // Wait for our own event before choosing again.
                            if !await_own_move(&mut ws, &mut replica, &mut tally, seat, stop).await? {
                                break 'games;
                            }
                            continue;
                        }
                    }
                    msg = next(&mut ws) => {
                        if !on_message(msg?, &mut replica, &mut tally, seat, epoch, &slot)? { break 'games; }
                        continue;
                    }
                }
            }
            if !replica.game.is_playing() {
                continue 'games;
            }
            if Instant::now() >= stop {
                break 'games;
            }
            let msg = tokio::select! {
                msg = next(&mut ws) => msg?,
                _ = tokio::time::sleep_until(stop.into()) => break 'games,
            };
            if !on_message(msg, &mut replica, &mut tally, seat, epoch, &slot)? {
                break 'games;
            }
            if replica.game.turn() == seat {
                next_move_at = next_move_at.max(Instant::now() + interval);
            }
        }
    }
    let _ = ws.close(None).await;
    Ok(tally)
}

/// Reads until our own move comes back as an event (or an error refuses it); `false` when
/// the socket closed or the run is over (a last drop may be answered by nothing but the
/// game's end, which can be far off).
async fn await_own_move(
    ws: &mut Ws,
    replica: &mut Replica,
    tally: &mut Tally,
    seat: Player,
    stop: Instant,
) -> Result<bool> {
    let before = replica.game.move_count();
    loop {
        let msg = tokio::select! {
            msg = next(ws) => msg?,
            _ = tokio::time::sleep_until(stop.into()) => return Ok(false),
        };
        match msg {
            Some(Incoming::Event { entry, .. }) => {
                if let Some(entry) = &entry {
                    replica.apply(entry);
                }
                if replica.game.move_count() > before
                    || !replica.game.is_playing()
                    || replica.game.turn() != seat
                {
                    return Ok(true);
                }
            }
            Some(Incoming::Message(ServerMessage::Error { code, .. })) => {
                tally.error(code);
                return Ok(true);
            }
            Some(_) => {}
            None => return Ok(false),
        }
    }
}

/// Applies one message to the replica; records the opponent's move latency. `false` when
/// the socket closed.
fn on_message(
    msg: Option<Incoming>,
    replica: &mut Replica,
    tally: &mut Tally,
    seat: Player,
    epoch: Instant,
    slot: &Slot,
) -> Result<bool> {
    match msg {
        None => Ok(false),
        Some(Incoming::Event { entry, .. }) => {
            if let Some(entry) = &entry {
                if let EntryKind::Act {
                    player,
                    action: Action::Move { .. } | Action::Place { .. },
                    ..
                } = entry.kind
                {
                    let sent = slot.sent_us.load(Ordering::Acquire);
                    if player != seat && slot.measuring(sent) {
                        let h = tally.opponent.as_mut().expect("player histogram");
                        h.saturating_record(micros_since(epoch).saturating_sub(sent).max(1));
                    }
                }
                replica.apply(entry);
            }
            Ok(true)
        }
        Some(Incoming::Message(ServerMessage::Error { code, .. })) => {
            tally.error(code);
            Ok(true)
        }
        Some(_) => Ok(true),
    }
}

/// A watcher: follows its slot from game to game and times every move's arrival.
pub(crate) async fn watcher(
    args: Arc<Args>,
    slot: Arc<Slot>,
    (index, node): (usize, usize),
    (epoch, stop): (Instant, Instant),
    gate: Arc<Semaphore>,
) -> Result<Tally> {
    let mut ws = connect(&args.server[node], &format!("watch{index}"), &gate).await?;
    let mut games = slot.game.subscribe();
    let mut tally = Tally {
        watcher: Some(histogram()),
        ..Tally::default()
    };
    let mut current = None;
    loop {
        let wanted = *games.borrow_and_update();
        if let Some(game) = wanted.filter(|_| wanted != current) {
            if let Some(old) = current {
                send(&mut ws, &ClientMessage::Leave { game: old }).await?;
            }
            current = wanted;
            let watch = ClientMessage::Watch {
                game,
                after_seq: None,
            };
            send(&mut ws, &watch).await?;
        }
        let msg = tokio::select! {
            msg = next(&mut ws) => msg?,
            _ = games.changed() => continue,
            _ = tokio::time::sleep_until(stop.into()) => break,
        };
        match msg {
            None => break,
            Some(Incoming::Event { game, entry }) if Some(game) == current => {
                if let Some(entry) = &entry {
                    if matches!(
                        entry.kind,
                        EntryKind::Act {
                            action: Action::Move { .. } | Action::Place { .. },
                            ..
                        }
                    ) {
                        let sent = slot.sent_us.load(Ordering::Acquire);
                        if slot.measuring(sent) {
                            let h = tally.watcher.as_mut().expect("watcher histogram");
                            h.saturating_record(micros_since(epoch).saturating_sub(sent).max(1));
                        }
                    }
                }
            }
            Some(Incoming::Message(ServerMessage::Error { code, .. })) => tally.error(code),
            Some(_) => {}
        }
    }
    let _ = ws.close(None).await;
    Ok(tally)
}
