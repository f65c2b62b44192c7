//! HTML text: escaping, and a figure with its caption.

use std::fmt::Write;

pub struct Chart {
    /// File-name stem for `--svg`.
    pub name: String,
    pub title: String,
    /// What the chart shows: spec shared by its runs, what was left out.
    pub caption: String,
    pub svg: String,
    /// The profile section of the run it belongs to (an index into the report's runs), or None: a chart
    /// of the charts section.
    pub run: Option<usize>,
}

pub(crate) use crate::markup::esc;

/// [`figure`], the chart's own copy of its SVG let go after unless `keep` (asked for as a file of its
/// own): a page of many charts is not held twice.
pub(super) fn embed(c: &mut Chart, keep: bool, o: &mut String) {
    figure(c, o);
    if !keep {
        c.svg = String::new();
        // Its pages back to the kernel, for the page growing beside the charts not yet in it.
        iolab_sys::release_free_heap();
    }
}

/// A chart as a figure: its SVG (without the XML declaration) and its caption.
pub(super) fn figure(c: &Chart, o: &mut String) {
    let svg = c.svg.trim_start();
    let svg = if svg.starts_with("<?xml") {
        svg.split_once("?>").map(|x| x.1).unwrap_or(svg)
    } else {
        svg
    };
    let _ = writeln!(
        o,
        "<figure id=\"{}\">{}<figcaption><b>{}</b>. {}</figcaption></figure>",
        esc(&c.name),
        svg,
        esc(&c.title),
        esc(&c.caption)
    );
}
