//! A flame graph drawn by the inferno crate, then made static: no script, no event handlers, every id
//! and style rule scoped to the graph so several can share one page. Left out of a board's build (the
//! `flamegraphs` feature).

use quick_xml::events::{BytesEnd, BytesStart, BytesText, Event};
use quick_xml::{Reader, Writer};

/// The flame graph's width in pixels (the report's other charts are as wide).
const WIDTH: usize = 1000;

/// One flame graph of folded stacks ("a;b;c count" lines), made static with ids under `id`.
pub(in crate::html) fn flame_svg(
    folded: &[String],
    title: &str,
    subtitle: &str,
    id: &str,
) -> Result<String, String> {
    let mut lines: Vec<&str> = folded.iter().map(|l| l.trim()).collect();
    // inferno merges neighbouring stacks only: from_lines wants them sorted.
    lines.sort_unstable();
    let mut opt = inferno::flamegraph::Options::default();
    opt.title = title.into();
    opt.subtitle = Some(subtitle.into());
    opt.image_width = Some(WIDTH);
    // Colors by name, so a function has the same color in every run's graph.
    opt.hash = true;
    opt.count_name = "samples".into();
    let mut svg = Vec::new();
    inferno::flamegraph::from_lines(&mut opt, lines, &mut svg).map_err(|e| e.to_string())?;
    make_static(&String::from_utf8_lossy(&svg), id)
}

/// The page's style for one flame graph, every rule under its id (inferno's own rules are global).
fn scoped_style(id: &str) -> String {
    format!(
        "#{id} text {{ font-family:Verdana,sans-serif; font-size:12px }} \
         #{id} #{id}-title {{ text-anchor:middle; font-size:17px }} \
         #{id} #{id}-subtitle {{ text-anchor:middle }} \
         #{id}-frames g:hover rect {{ stroke:black; stroke-width:0.5 }}"
    )
}

/// What inferno drew for its script: its buttons and the line the script fills in.
fn is_dropped(e: &BytesStart) -> bool {
    e.name().as_ref() == b"script"
        || e.attributes().flatten().any(|a| {
            a.key.as_ref() == b"id"
                && matches!(&*a.value, b"unzoom" | b"search" | b"matched" | b"details")
        })
}

/// The element with event handlers dropped, ids prefixed with `id-` and `url(#x)` references with them;
/// the root element gets the id itself.
fn scoped(e: &BytesStart, id: &str, root: bool) -> BytesStart<'static> {
    let name = String::from_utf8_lossy(e.name().as_ref()).into_owned();
    let mut out = BytesStart::new(name);
    if root {
        out.push_attribute(("id", id));
    }
    for a in e.attributes().flatten() {
        let key = a.key.as_ref();
        if key.starts_with(b"on") {
            continue;
        }
        let value = String::from_utf8_lossy(&a.value);
        let value = if key == b"id" {
            format!("{id}-{value}")
        } else {
            value.replace("url(#", &format!("url(#{id}-"))
        };
        out.push_attribute((key, value.as_bytes()));
    }
    out
}

/// inferno's SVG without its script, event handlers, buttons, comments and doctype, with its ids and
/// style scoped to `id`.
fn make_static(svg: &str, id: &str) -> Result<String, String> {
    let mut r = Reader::from_str(svg);
    let mut w = Writer::new(Vec::new());
    let err = |e: std::io::Error| e.to_string();
    // Depth inside an element being left out.
    let mut skip = 0usize;
    let mut root = true;
    loop {
        let ev = r.read_event().map_err(|e| e.to_string())?;
        if skip > 0 {
            match ev {
                Event::Start(_) => skip += 1,
                Event::End(_) => skip -= 1,
                Event::Eof => return Err("the SVG ends inside an element".into()),
                _ => {}
            }
            continue;
        }
        match ev {
            Event::Eof => break,
            Event::DocType(_) | Event::Comment(_) | Event::PI(_) => {}
            Event::Start(e) if is_dropped(&e) => skip = 1,
            Event::Empty(e) if is_dropped(&e) => {}
            Event::Start(e) if e.name().as_ref() == b"style" => {
                w.write_event(Event::Start(e.to_owned())).map_err(err)?;
                let css = scoped_style(id);
                w.write_event(Event::Text(BytesText::new(&css)))
                    .map_err(err)?;
                w.write_event(Event::End(BytesEnd::new("style")))
                    .map_err(err)?;
                skip = 1;
            }
            Event::Start(e) => {
                w.write_event(Event::Start(scoped(&e, id, root)))
                    .map_err(err)?;
                root = false;
            }
            Event::Empty(e) => w
                .write_event(Event::Empty(scoped(&e, id, false)))
                .map_err(err)?,
            other => w.write_event(other).map_err(err)?,
        }
    }
    String::from_utf8(w.into_inner()).map_err(|e| e.to_string())
}
