//! The wall clock, read in one place.

use std::time::{SystemTime, UNIX_EPOCH};

/// Server wall-clock time in ms since the Unix epoch.
pub fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}
