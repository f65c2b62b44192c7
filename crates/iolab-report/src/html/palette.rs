//! The report's colours: twelve told apart at a glance, and a page's palette that gives each series name
//! one colour in every chart of the page.

use plotters::style::RGBColor;

/// Twelve colors told apart at a glance (Tableau's ten, black and a dark indigo): a chart holds at most
/// `vary::MAX_SERIES` series (more are split into panels of their own), so no two in a panel share one.
pub(super) fn color(i: usize) -> RGBColor {
    const P: [RGBColor; COLORS] = [
        RGBColor(31, 119, 180),
        RGBColor(255, 127, 14),
        RGBColor(44, 160, 44),
        RGBColor(214, 39, 40),
        RGBColor(148, 103, 189),
        RGBColor(140, 86, 75),
        RGBColor(227, 119, 194),
        RGBColor(127, 127, 127),
        RGBColor(188, 189, 34),
        RGBColor(23, 190, 207),
        RGBColor(0, 0, 0),
        RGBColor(40, 40, 120),
    ];
    P[i % P.len()]
}

/// The palette's size.
pub(super) const COLORS: usize = 12;

/// One colour per series name across a page's charts, so that a method is drawn in the same colour in
/// every chart (and in every part of a chart split to fit the palette): a name keeps the colour it was
/// first drawn in, unless a chart already gives that colour to another of its names (a chart's series
/// are always told apart). Fresh names take the palette in order.
#[derive(Default)]
pub(super) struct Palette {
    of: std::collections::HashMap<String, usize>,
    next: usize,
}

impl Palette {
    /// The palette index of each of `names`, different from one another (up to the palette's size).
    pub(super) fn colors(&mut self, names: &[String]) -> Vec<usize> {
        let mut used = [false; COLORS];
        let mut out: Vec<Option<usize>> = names
            .iter()
            .map(|n| {
                let c = *self.of.get(n)?;
                (!std::mem::replace(&mut used[c], true)).then_some(c)
            })
            .collect();
        for (i, n) in names.iter().enumerate() {
            if out[i].is_some() {
                continue;
            }
            let c = (0..COLORS)
                .map(|k| (self.next + k) % COLORS)
                .find(|c| !used[*c])
                .unwrap_or(i % COLORS);
            used[c] = true;
            out[i] = Some(c);
            if !self.of.contains_key(n) {
                self.of.insert(n.clone(), c);
                self.next = (c + 1) % COLORS;
            }
        }
        out.into_iter().flatten().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: &[&str]) -> Vec<String> {
        n.iter().map(|s| s.to_string()).collect()
    }

    /// A method keeps its colour from chart to chart, whatever else the chart holds and in whatever order.
    #[test]
    fn a_name_keeps_its_colour_across_charts() {
        let mut p = Palette::default();
        let a = p.colors(&names(&["psync", "io_uring", "mmap"]));
        assert_eq!(a, vec![0, 1, 2]);
        // A second chart (a part split off to fit the palette): new names take fresh colours.
        let b = p.colors(&names(&["aio", "sync"]));
        assert_eq!(b, vec![3, 4]);
        let c = p.colors(&names(&["mmap", "aio", "psync"]));
        assert_eq!(c, vec![2, 3, 0]);
    }

    /// A chart's series are always told apart: where two names would share a colour (a page of more names
    /// than the palette has), the later one takes a colour the chart leaves free.
    #[test]
    fn a_charts_series_never_share_a_colour() {
        let mut p = Palette::default();
        let first: Vec<String> = (0..COLORS).map(|i| format!("m{i}")).collect();
        p.colors(&first);
        // Names 12.. wrap onto the colours of m0.. in a chart of their own.
        let more: Vec<String> = (COLORS..COLORS + 3).map(|i| format!("m{i}")).collect();
        assert_eq!(p.colors(&more), vec![0, 1, 2]);
        // Together with m0 and m1 in one chart: all different, the first of each pair keeping its own.
        let mixed = names(&["m12", "m0", "m13", "m1"]);
        let c = p.colors(&mixed);
        assert_eq!((c[0], c[2]), (0, 1));
        let mut d = c.clone();
        d.sort();
        d.dedup();
        assert_eq!(d.len(), 4, "{c:?}");
        // More series than colours: every series still gets one.
        let many: Vec<String> = (0..20).map(|i| format!("n{i}")).collect();
        assert_eq!(p.colors(&many).len(), 20);
    }
}
