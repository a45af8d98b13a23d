//! A line chart's geometry, free of any canvas: where the plot area sits, the axes' scales and
//! labelled ticks, each series as pixel points, and what lies under the pointer. The page's
//! canvas code only strokes what this computes, so every number on a chart is tested natively.

use super::scale::{LinearScale, TickFormat, nice_domain, nice_ticks, padded_domain, tick_labels};

/// One named line. `points` are (x, y) in data units, x ascending; non-finite y values (a
/// diverged step) break the line instead of dragging it off the chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub name: String,
    /// A CSS colour.
    pub colour: &'static str,
    pub points: Vec<(f64, f64)>,
    /// Dots at each point: for per-epoch values, which are few and matter one by one.
    pub dots: bool,
}

/// A labelled tick: where it sits (pixels along its axis) and its text.
#[derive(Debug, Clone, PartialEq)]
pub struct Tick {
    pub pixel: f64,
    pub label: String,
}

/// The plot area inside the canvas, in CSS pixels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Area {
    pub left: f64,
    pub top: f64,
    pub right: f64,
    pub bottom: f64,
}

impl Area {
    pub fn contains_x(&self, x: f64) -> bool {
        x >= self.left && x <= self.right
    }
}

/// Everything needed to draw a chart of `width × height` CSS pixels.
#[derive(Debug, Clone, PartialEq)]
pub struct ChartLayout {
    pub area: Area,
    pub x: LinearScale,
    pub y: LinearScale,
    pub x_ticks: Vec<Tick>,
    pub y_ticks: Vec<Tick>,
    pub y_format: TickFormat,
}

/// Room around the plot area for tick labels (left, bottom) and breathing space.
const MARGIN_LEFT: f64 = 48.0;
const MARGIN_RIGHT: f64 = 12.0;
const MARGIN_TOP: f64 = 10.0;
const MARGIN_BOTTOM: f64 = 28.0;
/// Roughly one tick per this many pixels, so a phone-width chart gets fewer labels.
const PIXELS_PER_X_TICK: f64 = 70.0;
const PIXELS_PER_Y_TICK: f64 = 40.0;

/// Lays out a chart of the series. `x_extent` is the x range to show at least (e.g. 0 to the
/// planned number of epochs, so the axis does not rescale every epoch); `y_floor_zero` pins an
/// accuracy axis at 0. `None` when no series has a finite point and `x_extent` is empty.
pub fn layout(
    series: &[Series],
    width: f64,
    height: f64,
    x_extent: (f64, f64),
    y_format: TickFormat,
) -> Option<ChartLayout> {
    let ys = series.iter().flat_map(|series| series.points.iter().map(|&(_, y)| y));
    let y_range = match y_format {
        TickFormat::Percent => (0.0, padded_domain(ys).map_or(1.0, |(_, high)| high.clamp(0.1, 1.0))),
        TickFormat::Number => padded_domain(ys).unwrap_or((0.0, 1.0)),
    };
    layout_within(series, width, height, x_extent, y_range, y_format)
}

/// As [`layout`], with the y axis on `y_range` whatever the data (a quantity with known bounds,
/// such as a distance inside the image, keeps one scale as it changes), rounded out to ticks.
pub fn layout_within(
    series: &[Series],
    width: f64,
    height: f64,
    x_extent: (f64, f64),
    (y_low, y_high): (f64, f64),
    y_format: TickFormat,
) -> Option<ChartLayout> {
    let area = Area {
        left: MARGIN_LEFT,
        top: MARGIN_TOP,
        right: (width - MARGIN_RIGHT).max(MARGIN_LEFT + 1.0),
        bottom: (height - MARGIN_BOTTOM).max(MARGIN_TOP + 1.0),
    };
    let xs = series.iter().flat_map(|series| series.points.iter().map(|&(x, _)| x));
    let (x_min, x_max) = padded_extent(xs.chain([x_extent.0, x_extent.1]))?;
    let x_count = ((area.right - area.left) / PIXELS_PER_X_TICK).floor().max(2.0) as usize;
    let y_count = ((area.bottom - area.top) / PIXELS_PER_Y_TICK).floor().max(2.0) as usize;
    let x_domain = nice_domain(x_min, x_max, x_count);
    let y_domain = nice_domain(y_low, y_high, y_count);
    let x = LinearScale::new(x_domain, (area.left, area.right));
    let y = LinearScale::new(y_domain, (area.bottom, area.top));
    Some(ChartLayout {
        area,
        x_ticks: ticks(&x, x_domain, x_count, TickFormat::Number),
        y_ticks: ticks(&y, y_domain, y_count, y_format),
        x,
        y,
        y_format,
    })
}

fn padded_extent(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    let (min, max) = values
        .filter(|value| value.is_finite())
        .fold(None, |bounds: Option<(f64, f64)>, value| match bounds {
            None => Some((value, value)),
            Some((min, max)) => Some((min.min(value), max.max(value))),
        })?;
    Some(if min == max { (min - 0.5, max + 0.5) } else { (min, max) })
}

fn ticks(scale: &LinearScale, (start, stop): (f64, f64), count: usize, format: TickFormat) -> Vec<Tick> {
    let values = nice_ticks(start, stop, count);
    tick_labels(&values, format)
        .into_iter()
        .zip(&values)
        .map(|(label, &value)| Tick { pixel: scale.map(value), label })
        .collect()
}

impl ChartLayout {
    /// A series as runs of pixel points; a non-finite value ends one run and starts the next.
    pub fn polylines(&self, series: &Series) -> Vec<Vec<(f64, f64)>> {
        let mut runs = vec![Vec::new()];
        for &(x, y) in &series.points {
            if x.is_finite() && y.is_finite() {
                runs.last_mut().expect("never empty").push((self.x.map(x), self.y.map(y)));
            } else if !runs.last().expect("never empty").is_empty() {
                runs.push(Vec::new());
            }
        }
        runs.retain(|run| !run.is_empty());
        runs
    }

    /// What the pointer at `pointer_x` (CSS pixels) points at: for each series with points, the
    /// point nearest in x, as long as it lies within `reach` pixels. `None` outside the plot.
    pub fn hover(&self, series: &[Series], pointer_x: f64, reach: f64) -> Option<Vec<HoverValue>> {
        if !self.area.contains_x(pointer_x) {
            return None;
        }
        let values: Vec<HoverValue> = series
            .iter()
            .filter_map(|series| {
                let &(x, y) = series
                    .points
                    .iter()
                    .filter(|(_, y)| y.is_finite())
                    .min_by(|a, b| (self.x.map(a.0) - pointer_x).abs().total_cmp(&(self.x.map(b.0) - pointer_x).abs()))?;
                let pixel = (self.x.map(x), self.y.map(y));
                ((pixel.0 - pointer_x).abs() <= reach).then(|| HoverValue {
                    series: series.name.clone(),
                    colour: series.colour,
                    x,
                    y,
                    pixel,
                    label: self.value_label(y),
                })
            })
            .collect();
        (!values.is_empty()).then_some(values)
    }

    /// A value written as the y axis writes it, with more precision: "1.2345", "57.3%".
    pub fn value_label(&self, y: f64) -> String {
        match self.y_format {
            TickFormat::Number => format!("{y:.4}"),
            TickFormat::Percent => format!("{:.1}%", 100.0 * y),
        }
    }
}

/// One series' value under the pointer.
#[derive(Debug, Clone, PartialEq)]
pub struct HoverValue {
    pub series: String,
    pub colour: &'static str,
    pub x: f64,
    pub y: f64,
    /// Where the point is drawn, for a marker.
    pub pixel: (f64, f64),
    pub label: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(points: &[(f64, f64)]) -> Series {
        Series { name: "loss".into(), colour: "#000", points: points.to_vec(), dots: false }
    }

    #[test]
    fn the_axes_cover_the_data_and_the_planned_extent_on_nice_ticks() {
        let data = [series(&[(0.1, 2.3), (1.0, 1.9), (2.0, 1.62)])];
        let chart = layout(&data, 400.0, 240.0, (0.0, 10.0), TickFormat::Number).unwrap();
        assert_eq!(chart.x.domain, (0.0, 10.0));
        let labels: Vec<&str> = chart.x_ticks.iter().map(|tick| tick.label.as_str()).collect();
        assert_eq!(labels, ["0", "2", "4", "6", "8", "10"]);
        assert!(chart.y.domain.0 <= 1.62 && chart.y.domain.1 >= 2.3);
        // Larger values are drawn higher: a smaller pixel y.
        assert!(chart.y.map(2.3) < chart.y.map(1.62));
        assert_eq!(chart.x_ticks[0].pixel, chart.area.left);
        assert_eq!(chart.x_ticks.last().unwrap().pixel, chart.area.right);
    }

    #[test]
    fn accuracy_axes_start_at_zero_and_write_percentages() {
        let data = [series(&[(1.0, 0.347), (2.0, 0.5)])];
        let chart = layout(&data, 400.0, 240.0, (0.0, 10.0), TickFormat::Percent).unwrap();
        assert_eq!(chart.y.domain.0, 0.0);
        assert_eq!(chart.y_ticks[0].label, "0%");
        assert!(chart.y_ticks.last().unwrap().label.ends_with('%'));
        assert_eq!(chart.value_label(0.5734), "57.3%");
    }

    #[test]
    fn a_fixed_y_range_is_kept_whatever_the_data() {
        let data = [series(&[(1.0, 14.6), (4.0, 15.2)])];
        let chart = layout_within(&data, 400.0, 240.0, (0.5, 4.5), (0.0, 39.6), TickFormat::Number).unwrap();
        assert_eq!(chart.y.domain, (0.0, 40.0));
        assert_eq!(chart.y_ticks[0].label, "0");
        assert!(chart.x.domain.0 <= 0.5 && chart.x.domain.1 >= 4.5);
    }

    #[test]
    fn narrow_charts_get_fewer_ticks() {
        let data = [series(&[(0.0, 1.0), (100.0, 2.0)])];
        let wide = layout(&data, 800.0, 300.0, (0.0, 100.0), TickFormat::Number).unwrap();
        let narrow = layout(&data, 260.0, 300.0, (0.0, 100.0), TickFormat::Number).unwrap();
        assert!(narrow.x_ticks.len() < wide.x_ticks.len(), "{} vs {}", narrow.x_ticks.len(), wide.x_ticks.len());
    }

    #[test]
    fn an_empty_chart_still_has_axes_over_the_planned_extent() {
        let chart = layout(&[], 400.0, 240.0, (0.0, 10.0), TickFormat::Number).unwrap();
        assert_eq!(chart.x.domain, (0.0, 10.0));
        assert_eq!(chart.y.domain, (0.0, 1.0));
    }

    #[test]
    fn a_non_finite_value_breaks_the_line() {
        let data = series(&[(0.0, 1.0), (1.0, 0.9), (2.0, f64::NAN), (3.0, 0.8), (4.0, 0.7)]);
        let chart = layout(std::slice::from_ref(&data), 400.0, 240.0, (0.0, 4.0), TickFormat::Number).unwrap();
        let runs = chart.polylines(&data);
        assert_eq!(runs.iter().map(Vec::len).collect::<Vec<_>>(), [2, 2]);
    }

    #[test]
    fn hovering_finds_each_series_nearest_point_and_nothing_outside_the_plot() {
        let data = [
            series(&[(1.0, 2.0), (2.0, 1.5), (3.0, 1.2)]),
            Series { name: "test".into(), colour: "#f00", points: vec![(1.0, 2.1), (3.0, 1.4)], dots: true },
        ];
        let chart = layout(&data, 400.0, 240.0, (0.0, 4.0), TickFormat::Number).unwrap();
        let near_two = chart.x.map(2.1);
        let values = chart.hover(&data, near_two, 1000.0).unwrap();
        assert_eq!((values[0].x, values[0].y, values[0].label.as_str()), (2.0, 1.5, "1.5000"));
        // The test series has no point at 2: its nearest (1 or 3) is further than a small reach.
        assert_eq!(chart.hover(&data, near_two, 20.0).unwrap().len(), 1);
        assert_eq!(chart.hover(&data, chart.area.left - 5.0, 1000.0), None);
    }
}
