//! Numbers formatted for people.

/// 546186 → "546,186".
pub fn group_thousands(value: usize) -> String {
    let digits = value.to_string();
    let mut grouped = String::new();
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    grouped
}

/// `count` of a `noun` with an English plural: "1 epoch", "3 epochs", "1,200 steps".
pub fn count(count: usize, noun: &str) -> String {
    if count == 1 { format!("1 {noun}") } else { format!("{} {noun}s", group_thousands(count)) }
}

/// A duration for a status line: "0.4 s", "12 s", "3 min 20 s", "1 h 05 min".
pub fn duration(seconds: f64) -> String {
    if !seconds.is_finite() || seconds < 0.0 {
        return "–".into();
    }
    if seconds < 9.95 {
        return format!("{seconds:.1} s");
    }
    let total = seconds.round() as u64;
    let (hours, minutes, secs) = (total / 3600, total / 60 % 60, total % 60);
    match (hours, minutes) {
        (0, 0) => format!("{secs} s"),
        (0, _) => format!("{minutes} min {secs:02} s"),
        _ => format!("{hours} h {minutes:02} min"),
    }
}

/// The page's title while it trains, so the tab strip shows progress: "▶ 43% · epoch 5/10"
/// ("⏸" while paused). The percentage rounds down: 100 % only once the last step ran.
pub fn training_title(step: usize, total_steps: usize, epoch: usize, epochs: usize, paused: bool) -> String {
    let percent = (100 * step.min(total_steps)).checked_div(total_steps).unwrap_or(0);
    format!("{} {percent}% · epoch {epoch}/{epochs}", if paused { "⏸" } else { "▶" })
}

/// Bytes for people: "950 B", "14.9 MB".
pub fn bytes(count: u64) -> String {
    match count {
        0..1_000 => format!("{count} B"),
        1_000..1_000_000 => format!("{:.1} kB", count as f64 / 1e3),
        _ => format!("{:.1} MB", count as f64 / 1e6),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_is_singular_and_every_other_count_plural() {
        assert_eq!(count(1, "epoch"), "1 epoch");
        assert_eq!(count(0, "epoch"), "0 epochs");
        assert_eq!(count(10, "epoch"), "10 epochs");
        assert_eq!(count(1200, "step"), "1,200 steps");
    }

    #[test]
    fn the_title_shows_progress_and_pause() {
        assert_eq!(training_title(340, 790, 5, 10, false), "▶ 43% · epoch 5/10");
        assert_eq!(training_title(789, 790, 10, 10, true), "⏸ 99% · epoch 10/10");
        assert_eq!(training_title(790, 790, 10, 10, false), "▶ 100% · epoch 10/10");
        assert_eq!(training_title(0, 0, 1, 1, false), "▶ 0% · epoch 1/1");
    }

    #[test]
    fn durations_read_naturally() {
        assert_eq!(duration(0.42), "0.4 s");
        assert_eq!(duration(12.4), "12 s");
        assert_eq!(duration(200.0), "3 min 20 s");
        assert_eq!(duration(3900.0), "1 h 05 min");
        assert_eq!(duration(f64::NAN), "–");
    }

    #[test]
    fn byte_counts_read_naturally() {
        assert_eq!(bytes(950), "950 B");
        assert_eq!(bytes(14_946_519), "14.9 MB");
    }

    #[test]
    fn thousands_are_grouped() {
        assert_eq!(group_thousands(546_186), "546,186");
        assert_eq!(group_thousands(999), "999");
        assert_eq!(group_thousands(1_000), "1,000");
        assert_eq!(group_thousands(3_236_106), "3,236,106");
    }
}
