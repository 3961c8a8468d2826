//! The wall clock as the host reads it for azd: Unix time. One place, so every
//! token expiry and progress timestamp reads the same clock the same way.

use std::time::{SystemTime, UNIX_EPOCH};

/// Seconds since the Unix epoch (0 on a clock set before it).
pub fn unix_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Milliseconds since the Unix epoch, as azd's progress timestamps carry them
/// (0 on a clock set before it).
pub fn unix_millis() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_and_milliseconds_read_the_same_clock() {
        let secs = unix_secs();
        let millis = unix_millis();
        // After 2020 and within a second of each other.
        assert!(secs > 1_577_836_800, "{secs}");
        assert!(
            (millis / 1000 - i64::try_from(secs).unwrap()).abs() <= 1,
            "{millis} {secs}"
        );
    }
}
