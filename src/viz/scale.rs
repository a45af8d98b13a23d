//! Chart axes: a linear data-to-pixel scale, "nice" 1-2-5 ticks, labels without float noise, and
//! the padded domain of a loss curve.
//!
//! The tick steps follow d3-array's `tickIncrement` (ISC licence): the raw step
//! `span / count` is rounded to 1, 2, 5 or 10 × 10^k, choosing the nearest in log space (the
//! thresholds are √2, √10, √50). A step below 1 is kept as its integer inverse, so tick `i` is
//! `i / 5` rather than `i × 0.2` and 0.6 prints as 0.6, not 0.6000000000000001.

/// Maps a data interval (the domain) linearly onto a pixel interval (the range).
///
/// The range may run backwards, as a chart's y axis does (`(height, 0.0)`): larger values then
/// land higher on the canvas.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinearScale {
    pub domain: (f64, f64),
    pub range: (f64, f64),
}

impl LinearScale {
    pub fn new(domain: (f64, f64), range: (f64, f64)) -> Self {
        Self { domain, range }
    }

    /// Pixel position of a data value. Values outside the domain extrapolate; an empty domain
    /// (both ends equal) maps everything to the middle of the range, as d3 does.
    pub fn map(&self, value: f64) -> f64 {
        interpolate(self.range, fraction(self.domain, value))
    }

    /// Data value under a pixel position: "what is under the pointer". The inverse of
    /// [`map`](Self::map) up to rounding.
    pub fn invert(&self, pixel: f64) -> f64 {
        interpolate(self.domain, fraction(self.range, pixel))
    }
}

/// Where `value` lies in `(start, end)`: 0 at the start, 1 at the end, ½ if the interval is empty.
fn fraction((start, end): (f64, f64), value: f64) -> f64 {
    let span = end - start;
    if span == 0.0 { 0.5 } else { (value - start) / span }
}

fn interpolate((start, end): (f64, f64), fraction: f64) -> f64 {
    start + fraction * (end - start)
}

/// A 1-2-5 tick step, stored so that tick values are exact: a step of at least 1 as itself, a
/// smaller one as its inverse (an integer, e.g. 5 for 0.2).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Step {
    Multiple(f64),
    Fraction(f64),
}

impl Step {
    /// The step for about `count` intervals over `[start, stop]`; `None` for an empty,
    /// reversed or non-finite interval, or a count of zero.
    fn for_interval(start: f64, stop: f64, count: usize) -> Option<Step> {
        if count == 0 || !start.is_finite() || !stop.is_finite() || stop <= start {
            return None;
        }
        let raw = (stop - start) / count as f64;
        let power = raw.log10().floor();
        let error = raw / 10f64.powf(power);
        let factor = if error >= 50f64.sqrt() {
            10.0
        } else if error >= 10f64.sqrt() {
            5.0
        } else if error >= 2f64.sqrt() {
            2.0
        } else {
            1.0
        };
        Some(if power < 0.0 {
            Step::Fraction(10f64.powi(-power as i32) / factor)
        } else {
            Step::Multiple(10f64.powi(power as i32) * factor)
        })
    }

    /// `value` measured in steps, snapped to the nearest whole number when it is within rounding
    /// of one (0.3 × 10 = 3.0000000000000004 is 3 steps, not a little over).
    fn steps_in(self, value: f64) -> f64 {
        let steps = match self {
            Step::Multiple(step) => value / step,
            Step::Fraction(inverse) => value * inverse,
        };
        let nearest = steps.round();
        if (steps - nearest).abs() <= 1e-9 * nearest.abs().max(1.0) { nearest } else { steps }
    }

    /// The value of tick number `index`.
    fn tick(self, index: f64) -> f64 {
        match self {
            Step::Multiple(step) => index * step,
            Step::Fraction(inverse) => index / inverse,
        }
    }
}

/// The domain widened outwards to whole multiples of a 1-2-5 step for about `count` ticks
/// (d3's `scale.nice(count)`), so the axis starts and ends on a labelled tick.
///
/// The ends may come in either order; the result is ascending. An empty or non-finite domain,
/// or a count of zero, comes back as given (ordered).
pub fn nice_domain(min: f64, max: f64, count: usize) -> (f64, f64) {
    let (mut start, mut stop) = if min <= max { (min, max) } else { (max, min) };
    // Widening can change the step (0.37–2.41 becomes 0–2.5), so repeat until it settles.
    let mut previous = None;
    for _ in 0..10 {
        let Some(step) = Step::for_interval(start, stop, count) else { break };
        if previous == Some(step) {
            break;
        }
        start = step.tick(step.steps_in(start).floor());
        stop = step.tick(step.steps_in(stop).ceil());
        previous = Some(step);
    }
    (start, stop)
}

/// About `count` evenly spaced ticks on a 1-2-5 step that cover `[min, max]`: the first tick is
/// at or below the smaller end, the last at or above the larger, i.e. the ticks of
/// [`nice_domain`]. (d3's `ticks` instead stays inside the domain.)
///
/// A single point gives one tick; a non-finite domain or a count of zero gives none.
pub fn nice_ticks(min: f64, max: f64, count: usize) -> Vec<f64> {
    let (start, stop) = nice_domain(min, max, count);
    if count == 0 || !start.is_finite() || !stop.is_finite() {
        return Vec::new();
    }
    let Some(step) = Step::for_interval(start, stop, count) else { return vec![start] };
    let first = step.steps_in(start).floor() as i64;
    let last = step.steps_in(stop).ceil() as i64;
    (first..=last).map(|index| step.tick(index as f64)).collect()
}

/// How tick labels are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TickFormat {
    /// As the number: "0.2", "1.5", "1000".
    Number,
    /// A fraction as a percentage (accuracy axes): 0.3 → "30%".
    Percent,
}

/// Labels for a run of evenly spaced ticks, all with the decimals their step needs.
pub fn tick_labels(ticks: &[f64], format: TickFormat) -> Vec<String> {
    let step = match ticks {
        [first, second, ..] => (second - first).abs(),
        _ => f64::NAN,
    };
    ticks
        .iter()
        .map(|&value| match (format, step.is_finite() && step > 0.0) {
            (TickFormat::Number, true) => format_tick(value, step),
            (TickFormat::Percent, true) => format_percent_tick(value, step),
            (TickFormat::Number, false) => format_number(value),
            (TickFormat::Percent, false) => format!("{}%", format_number(100.0 * value)),
        })
        .collect()
}

/// Decimal places that show multiples of a 1-2-5 `step` exactly: 0 for 2 or 10, 1 for 0.5, 2
/// for 0.05. A step that is not a finite positive number gets 0.
pub fn step_decimals(step: f64) -> usize {
    if !step.is_finite() || step <= 0.0 {
        return 0;
    }
    // The small nudge keeps a step of 0.09999999999999998 (a difference of two ticks) at 1.
    (-(step.log10() + 1e-9).floor()).max(0.0) as usize
}

/// A tick's label with as many decimals as its step needs: `format_tick(0.1 + 0.2, 0.1)` is
/// "0.3".
pub fn format_tick(value: f64, step: f64) -> String {
    without_negative_zero(format!("{value:.*}", step_decimals(step)))
}

/// A fraction's tick label as a percentage: `format_percent_tick(0.3, 0.1)` is "30%".
pub fn format_percent_tick(fraction: f64, step: f64) -> String {
    format!("{}%", format_tick(100.0 * fraction, 100.0 * step))
}

/// A number with at most 12 significant digits and no trailing zeros, for a value without a
/// step to go by (a lone tick, a tooltip): 0.30000000000000004 → "0.3".
pub fn format_number(value: f64) -> String {
    if !value.is_finite() {
        return value.to_string();
    }
    if value == 0.0 {
        return "0".into();
    }
    let magnitude = value.abs().log10().floor() as i32;
    let decimals = (11 - magnitude).max(0) as usize;
    let text = format!("{value:.decimals$}");
    let text =
        if text.contains('.') { text.trim_end_matches('0').trim_end_matches('.') } else { &text };
    without_negative_zero(text.to_string())
}

/// "-0" or "-0.0" (a tiny negative value rounded away) reads as "0".
fn without_negative_zero(text: String) -> String {
    match text.strip_prefix('-') {
        Some(rest) if rest.chars().all(|c| c == '0' || c == '.') => rest.to_string(),
        _ => text,
    }
}

/// The y domain of a loss (or accuracy) curve: the span of the finite values plus 5% each side,
/// on a linear axis (no logarithms, so a zero or a negative value needs no special case).
///
/// NaN and infinite values (a diverged step) are left out. A single value, or values all equal,
/// get ±10% of the value (±1 around zero) so the line sits mid-chart instead of dividing by
/// zero. If every value is at least 0, the padding never takes the axis below 0. `None` when
/// there is no finite value to show.
pub fn padded_domain<T: Into<f64>>(values: impl IntoIterator<Item = T>) -> Option<(f64, f64)> {
    let (min, max) = values
        .into_iter()
        .map(Into::into)
        .filter(|value: &f64| value.is_finite())
        .fold(None, |bounds: Option<(f64, f64)>, value| match bounds {
            None => Some((value, value)),
            Some((min, max)) => Some((min.min(value), max.max(value))),
        })?;
    let padding = if min == max {
        if min == 0.0 { 1.0 } else { 0.1 * min.abs() }
    } else {
        0.05 * (max - min)
    };
    let low = if min >= 0.0 { (min - padding).max(0.0) } else { min - padding };
    Some((low, max + padding))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_for_the_unit_interval_step_by_a_fifth() {
        assert_eq!(nice_ticks(0.0, 1.0, 5), [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]);
    }

    #[test]
    fn ticks_cover_an_awkward_domain() {
        // Raw step 2.04 / 5 = 0.408 rounds to 0.5 (0.408 / 0.1 = 4.08 ≥ √10); the domain widens
        // to 0–2.5 and the step stays 0.5.
        assert_eq!(nice_ticks(0.37, 2.41, 5), [0.0, 0.5, 1.0, 1.5, 2.0, 2.5]);
        assert_eq!(nice_domain(0.37, 2.41, 5), (0.0, 2.5));
    }

    #[test]
    fn ticks_for_zero_to_ten_step_by_two() {
        assert_eq!(nice_ticks(0.0, 10.0, 5), [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
    }

    #[test]
    fn ticks_of_a_typical_loss_curve() {
        // A loss from 2.31 down to 0.52 over 5 ticks: step 0.5, covering 0.5–2.5.
        assert_eq!(nice_ticks(0.52, 2.31, 5), [0.5, 1.0, 1.5, 2.0, 2.5]);
        // Steps on the x axis: 0–7,813 with 4 ticks → step 2,000.
        assert_eq!(nice_ticks(0.0, 7813.0, 4), [0.0, 2000.0, 4000.0, 6000.0, 8000.0]);
    }

    #[test]
    fn small_steps_give_exact_decimals() {
        let ticks = nice_ticks(0.0, 0.03, 3);
        assert_eq!(ticks, [0.0, 0.01, 0.02, 0.03]);
        assert_eq!(tick_labels(&ticks, TickFormat::Number), ["0.00", "0.01", "0.02", "0.03"]);
    }

    #[test]
    fn reversed_and_negative_domains() {
        assert_eq!(nice_ticks(1.0, 0.0, 5), nice_ticks(0.0, 1.0, 5));
        assert_eq!(nice_ticks(-1.0, 1.0, 4), [-1.0, -0.5, 0.0, 0.5, 1.0]);
    }

    #[test]
    fn degenerate_domains() {
        assert_eq!(nice_ticks(3.0, 3.0, 5), [3.0]);
        assert_eq!(nice_domain(3.0, 3.0, 5), (3.0, 3.0));
        assert!(nice_ticks(0.0, f64::NAN, 5).is_empty());
        assert!(nice_ticks(f64::NEG_INFINITY, 1.0, 5).is_empty());
        assert!(nice_ticks(0.0, 1.0, 0).is_empty());
        // One tick requested still covers the domain.
        assert_eq!(nice_ticks(0.0, 1.0, 1), [0.0, 1.0]);
    }

    #[test]
    fn a_scale_maps_and_inverts() {
        let y_axis = LinearScale::new((0.0, 2.5), (300.0, 20.0));
        assert_eq!(y_axis.map(0.0), 300.0);
        assert_eq!(y_axis.map(2.5), 20.0);
        assert_eq!(y_axis.map(1.25), 160.0);
        for value in [-1.0, 0.0, 0.37, 1.0, 2.41, 7.0] {
            let back = y_axis.invert(y_axis.map(value));
            assert!((back - value).abs() < 1e-12, "{value} came back as {back}");
        }
        assert_eq!(y_axis.invert(300.0), 0.0);
    }

    #[test]
    fn an_empty_domain_maps_to_the_middle() {
        let scale = LinearScale::new((1.0, 1.0), (0.0, 100.0));
        assert_eq!(scale.map(1.0), 50.0);
        assert_eq!(scale.map(9.0), 50.0);
        assert_eq!(LinearScale::new((0.0, 1.0), (5.0, 5.0)).invert(5.0), 0.5);
    }

    #[test]
    fn labels_have_no_float_noise() {
        assert_eq!(format_tick(0.1 + 0.2, 0.1), "0.3");
        assert_eq!(format_number(0.1 + 0.2), "0.3");
        assert_eq!(format_number(1234.5), "1234.5");
        assert_eq!(format_number(-2.0), "-2");
        assert_eq!(format_number(0.0), "0");
        assert_eq!(format_tick(-1e-17, 0.5), "0.0");
        assert_eq!(format_tick(2000.0, 2000.0), "2000");
        assert_eq!(step_decimals(0.6 - 0.5), 1);
        let ticks = nice_ticks(0.37, 2.41, 5);
        assert_eq!(
            tick_labels(&ticks, TickFormat::Number),
            ["0.0", "0.5", "1.0", "1.5", "2.0", "2.5"]
        );
    }

    #[test]
    fn accuracy_labels_are_percentages() {
        assert_eq!(format_percent_tick(0.3, 0.1), "30%");
        assert_eq!(format_percent_tick(0.07, 0.01), "7%");
        assert_eq!(format_percent_tick(0.125, 0.005), "12.5%");
        let ticks = nice_ticks(0.0, 1.0, 5);
        assert_eq!(
            tick_labels(&ticks, TickFormat::Percent),
            ["0%", "20%", "40%", "60%", "80%", "100%"]
        );
        assert_eq!(tick_labels(&[0.5], TickFormat::Percent), ["50%"]);
    }

    #[test]
    fn padded_domain_of_a_loss_curve() {
        // Finite span 0.95–2.0 = 1.05, padded by 5% of it (0.0525) on each side.
        let (low, high) =
            padded_domain([2.0f32, 1.2, f32::NAN, 0.95, f32::INFINITY, 1.95]).unwrap();
        assert!((low - 0.8975).abs() < 1e-6 && (high - 2.0525).abs() < 1e-6, "{low} {high}");
        // Never below zero for non-negative values.
        assert_eq!(padded_domain([0.0, 10.0]), Some((0.0, 10.5)));
        assert_eq!(padded_domain([-1.0, 1.0]), Some((-1.1, 1.1)));
    }

    #[test]
    fn padded_domain_of_degenerate_curves() {
        assert_eq!(padded_domain([2.0]), Some((1.8, 2.2)));
        assert_eq!(padded_domain([2.0, 2.0, f64::NAN]), Some((1.8, 2.2)));
        assert_eq!(padded_domain([0.0]), Some((0.0, 1.0)));
        assert_eq!(padded_domain([-4.0]), Some((-4.4, -3.6)));
        assert_eq!(padded_domain([f64::NAN, f64::NEG_INFINITY]), None);
        assert_eq!(padded_domain(Vec::<f64>::new()), None);
    }
}
