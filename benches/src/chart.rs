//! An SVG chart of TFLOP/s against sequence length: one panel per (direction, head dim,
//! causal) and one line per implementation, written by hand (a few shapes and text).

use std::collections::BTreeMap;
use std::fmt::Write as _;

/// One measured point.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    /// The implementation: `flint`, `burn`, `sdpa-flash`, `sdpa-cudnn`, ...
    pub series: String,
    /// The panel title, e.g. `forward d128` or `backward d128 causal`.
    pub panel: String,
    /// Sequence length (the x axis, log scale).
    pub seq: usize,
    /// TFLOP/s (the y axis).
    pub tflops: f64,
}

/// Points read from `sdpa_reference.py` output (`name d causal seq batch heads fwd_ms
/// fwd_tflops [bwd_ms bwd_tflops]`); other lines are ignored.
pub fn parse_reference(text: &str) -> Vec<Point> {
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 8 || f[0] == "name" {
            continue;
        }
        let (Ok(d), Ok(causal), Ok(seq)) = (
            f[1].parse::<usize>(),
            f[2].parse::<u8>(),
            f[3].parse::<usize>(),
        ) else {
            continue;
        };
        let mut push = |dir: &str, v: Option<&&str>| {
            if let Some(t) = v
                .and_then(|t| t.parse::<f64>().ok())
                .filter(|t| t.is_finite())
            {
                out.push(Point {
                    series: f[0].to_string(),
                    panel: panel(dir, d, causal == 1),
                    seq,
                    tflops: t,
                });
            }
        };
        push("forward", f.get(7));
        push("backward", f.get(9));
    }
    out
}

/// The panel title for a direction, head dim and mask.
pub fn panel(direction: &str, d: usize, causal: bool) -> String {
    format!("{direction} d{d}{}", if causal { " causal" } else { "" })
}

/// Series name -> `(seq, tflops)` points of one panel.
type Lines<'a> = BTreeMap<&'a str, Vec<(usize, f64)>>;

const COLORS: [(&str, &str); 5] = [
    ("flint", "#d1495b"),
    ("sdpa-flash", "#00798c"),
    ("sdpa-cudnn", "#30638e"),
    ("burn", "#edae49"),
    ("sdpa-efficient", "#66a182"),
];

fn color(series: &str, index: usize) -> &'static str {
    COLORS
        .iter()
        .find(|(name, _)| *name == series)
        .map_or(["#555555", "#8d6a9f", "#a05c34"][index % 3], |(_, c)| c)
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The chart as an SVG document. Panels appear in sorted order, two per row.
pub fn svg(title: &str, points: &[Point]) -> String {
    let mut panels: BTreeMap<&str, Lines<'_>> = BTreeMap::new();
    for p in points {
        panels
            .entry(&p.panel)
            .or_default()
            .entry(&p.series)
            .or_default()
            .push((p.seq, p.tflops));
    }
    let series: Vec<&str> = {
        let mut s: Vec<&str> = points.iter().map(|p| p.series.as_str()).collect();
        s.sort();
        s.dedup();
        s
    };
    let (pw, ph, cols) = (480.0, 320.0, 2usize);
    let rows = panels.len().div_ceil(cols).max(1);
    let (width, height) = (pw * cols as f64, 60.0 + ph * rows as f64 + 30.0);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="24" text-anchor="middle" font-size="16">{}</text>"#,
        width / 2.0,
        escape(title)
    );
    // Legend.
    for (i, name) in series.iter().enumerate() {
        let x = 20.0 + 130.0 * i as f64;
        let _ = writeln!(
            s,
            r#"<rect x="{x}" y="38" width="14" height="4" fill="{}"/><text x="{}" y="44">{}</text>"#,
            color(name, i),
            x + 18.0,
            escape(name)
        );
    }
    for (n, (title, lines)) in panels.iter().enumerate() {
        let (ox, oy) = (pw * (n % cols) as f64, 60.0 + ph * (n / cols) as f64);
        let (left, right, top, bottom) = (ox + 56.0, ox + pw - 16.0, oy + 28.0, oy + ph - 40.0);
        let mut seqs: Vec<usize> = lines.values().flatten().map(|p| p.0).collect();
        seqs.sort_unstable();
        seqs.dedup();
        let lo = (seqs.first().copied().unwrap_or(1).max(1) as f64).log2();
        let hi = (seqs.last().copied().unwrap_or(2).max(1) as f64)
            .log2()
            .max(lo + 1.0);
        let ymax = lines.values().flatten().map(|p| p.1).fold(1.0, f64::max) * 1.1;
        let x = |seq: usize| left + ((seq.max(1) as f64).log2() - lo) / (hi - lo) * (right - left);
        let y = |t: f64| bottom - t / ymax * (bottom - top);
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" text-anchor="middle" font-size="13">{}</text>"#,
            (left + right) / 2.0,
            oy + 18.0,
            escape(title)
        );
        let _ = writeln!(
            s,
            r##"<path d="M{left},{top}V{bottom}H{right}" stroke="#333" fill="none"/>"##
        );
        for i in 0..=5 {
            let t = ymax / 5.0 * f64::from(i);
            let _ = writeln!(
                s,
                r##"<line x1="{left}" x2="{right}" y1="{0}" y2="{0}" stroke="#ddd"/><text x="{1}" y="{2}" text-anchor="end">{t:.0}</text>"##,
                y(t),
                left - 4.0,
                y(t) + 4.0
            );
        }
        for &seq in &seqs {
            let _ = writeln!(
                s,
                r#"<text x="{}" y="{}" text-anchor="middle">{seq}</text>"#,
                x(seq),
                bottom + 16.0
            );
        }
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" text-anchor="middle">sequence length</text><text transform="translate({},{}) rotate(-90)" text-anchor="middle">TFLOP/s</text>"#,
            (left + right) / 2.0,
            bottom + 32.0,
            ox + 14.0,
            (top + bottom) / 2.0
        );
        for (name, pts) in lines {
            let i = series.iter().position(|s| s == name).unwrap_or(0);
            let mut pts = pts.clone();
            pts.sort_by_key(|p| p.0);
            let path: Vec<String> = pts
                .iter()
                .enumerate()
                .map(|(j, &(q, t))| {
                    format!("{}{:.1},{:.1}", if j == 0 { 'M' } else { 'L' }, x(q), y(t))
                })
                .collect();
            let c = color(name, i);
            let _ = writeln!(
                s,
                r#"<path d="{}" stroke="{c}" stroke-width="2" fill="none"/>"#,
                path.join("")
            );
            for &(q, t) in &pts {
                let _ = writeln!(
                    s,
                    r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{c}"><title>{} {q}: {t:.1} TFLOP/s</title></circle>"#,
                    x(q),
                    y(t),
                    escape(name)
                );
            }
        }
    }
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_lines_become_points_and_the_chart_has_every_series() {
        let text = "# torch 2.11\nname d causal seq batch heads fwd_ms fwd_tflops bwd_ms bwd_tflops\n\
                    sdpa-flash 128 0 4096 4 16 0.5 300.0 1.3 290.5\n\
                    sdpa-cudnn 128 0 4096 4 16 0.3 600.0 nan nan\n\
                    sdpa-cudnn 128 1 8192 2 16 unsupported: no\n";
        let mut points = parse_reference(text);
        assert_eq!(points.len(), 3);
        assert_eq!(points[1].panel, "backward d128");
        assert_eq!(points[1].tflops, 290.5);
        points.push(Point {
            series: "flint".into(),
            panel: panel("forward", 128, false),
            seq: 4096,
            tflops: 180.0,
        });
        let chart = svg("test <chart>", &points);
        assert!(chart.starts_with("<svg") && chart.trim_end().ends_with("</svg>"));
        for needle in [
            "flint",
            "sdpa-flash",
            "sdpa-cudnn",
            "forward d128",
            "backward d128",
            "&lt;chart&gt;",
        ] {
            assert!(chart.contains(needle), "chart lacks {needle}");
        }
        assert_eq!(chart.matches("<circle").count(), 4);
    }
}
