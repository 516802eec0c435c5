//! How long the next round takes to place the previous round's comments (issue 27) at the
//! sizes people have: a 20,000-line file whose proposal rewrites 5,000 lines, the round after
//! rewriting them again and adding a header, with the most comments an action may carry
//! (500: 400 on proposed lines, 100 on original lines).
//!
//! `cargo run -q -p resolve-engine --example bench_rounds -- [runs]` (docs/PERFORMANCE.md)

use std::time::Instant;

use resolve_engine::review::{Comment, CommentSide};
use resolve_engine::rounds::carry_comments;
use resolve_engine::ChangeSet;

fn main() {
    let runs: usize = std::env::args().nth(1).and_then(|n| n.parse().ok()).unwrap_or(5);
    let original: String = (0..20_000)
        .map(|i| {
            if i % 4 == 0 {
                format!("  console.log(\"step {i}\", input);\n")
            } else {
                format!("  const v{i} = {i};\n")
            }
        })
        .collect();
    let round1 = original.replace("console.log(", "logger.debug(");
    let round2 = format!("// reviewed\n{}", original.replace("console.log(", "logger.info("));
    let mut was = ChangeSet::new();
    was.edit("big.ts", original.clone().into_bytes(), round1.into_bytes());
    let mut now = ChangeSet::new();
    now.edit("big.ts", original.into_bytes(), round2.into_bytes());
    let comments: Vec<(u32, Comment)> = (0..500u32)
        .map(|k| {
            let (side, line) =
                if k < 400 { (CommentSide::New, 1 + k * 48) } else { (CommentSide::Old, 2 + (k - 400) * 190) };
            let c = Comment {
                id: format!("c{k}"),
                path: "big.ts".into(),
                side,
                start_line: line,
                end_line: line + 1,
                quote: String::new(),
                text: "look here".into(),
                replacement_id: None,
            };
            (1, c)
        })
        .collect();
    let mut times = Vec::new();
    let mut changed = 0;
    for _ in 0..runs {
        let t = Instant::now();
        let out = carry_comments(&was, &now, &comments, &[]);
        times.push(t.elapsed().as_secs_f64() * 1000.0);
        changed = out.iter().filter(|e| e.changed).count();
        assert_eq!(out.len(), 500);
        assert!(out.iter().all(|e| e.now_lines.is_some()), "every comment keeps a place");
    }
    times.sort_by(f64::total_cmp);
    println!(
        "500 earlier comments on a 20,000-line file (5,000 lines rewritten again): median {:.1} ms (min {:.1}, max {:.1}; {runs} runs); {changed} marked changed",
        times[times.len() / 2],
        times[0],
        times[times.len() - 1]
    );
}
