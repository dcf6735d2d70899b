//! The interactive picker's decisions (`vg-pick`, `vecgrep -i`): how a
//! picked result is opened, what a row says, what the preview shows and what
//! the status line reports. The terminal UI itself (skim) is the binary's.

use std::path::Path;

use crate::format::{best_lines, display_path, escape_controls};
use crate::live::Progress;
use crate::records::HitRecord;

/// What Enter does with the picked results.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OpenPlan {
    /// Run this template for the picked result, through `sh -c` with
    /// `{file}`, `{line}` and `{end_line}` filled in (`expand`); `from`
    /// names where it came from (`open_cmd`, `VISUAL`, `EDITOR`), and
    /// `written` what the user wrote there, as an error about it says
    /// (audit 260: a failed `EDITOR=false` was named by the template made
    /// of it, `"false +{line} \"$1\""`).
    Command { template: String, from: &'static str, written: String },
    /// Print `path:line` for each result on stdout.
    Print,
}

/// OpenSelectedResult: the configured `open_cmd` (already filtered by
/// OpenCmdRule), else `$VISUAL`, else `$EDITOR` opened at the line; a
/// single result is opened, several are printed, and so is anything when
/// stdout is not a terminal (the picker is then part of a pipeline).
pub fn open_plan(
    open_cmd: Option<&str>,
    visual: Option<&str>,
    editor: Option<&str>,
    stdout_is_terminal: bool,
    picked: usize,
) -> OpenPlan {
    if !stdout_is_terminal || picked != 1 {
        return OpenPlan::Print;
    }
    if let Some(cmd) = open_cmd.filter(|c| !c.trim().is_empty()) {
        return OpenPlan::Command { template: cmd.to_string(), from: "open_cmd", written: cmd.to_string() };
    }
    // `VISUAL=` (set but empty) is no editor: `EDITOR` is asked next, as git does.
    let editor = set_to_something(visual).map(|v| (v, "VISUAL")).or(set_to_something(editor).map(|e| (e, "EDITOR")));
    match editor {
        Some((editor, from)) => {
            OpenPlan::Command { template: editor_template(editor), from, written: editor.to_string() }
        }
        None => OpenPlan::Print,
    }
}

/// An environment variable's value unless it is unset or blank.
fn set_to_something(value: Option<&str>) -> Option<&str> {
    value.map(str::trim).filter(|v| !v.is_empty())
}

/// How to open a file at a line with `editor` (a command line, as in
/// `$EDITOR`): `+LINE FILE` for the vi and emacs families and most others,
/// `FILE:LINE` where that is the editor's own syntax. The file is the
/// shell's first argument, written `"$1"` rather than `{file}`: the
/// variable is the user's own shell text, which may hold `$(…)` as git
/// lets it (audit 182: such an editor was refused after the pick, as if
/// `open_cmd` were at fault).
pub fn editor_template(editor: &str) -> String {
    let program = editor.split_whitespace().next().unwrap_or(editor);
    let name = Path::new(program).file_name().and_then(|n| n.to_str()).unwrap_or(program);
    match name {
        "code" | "code-insiders" | "codium" | "cursor" => format!("{editor} --goto \"$1\":{{line}}"),
        "hx" | "helix" | "subl" | "sublime_text" | "zed" | "kate" | "gedit" => format!("{editor} \"$1\":{{line}}"),
        _ => format!("{editor} +{{line}} \"$1\""),
    }
}

/// A command to open a file with: `sh -c SCRIPT sh FILE`. The file's name
/// reaches the shell as its first argument, never as text of the script, so
/// no name (`$(…)`, quotes, backquotes) is read as shell, however the
/// user's template quotes `{file}`. A program the template hands the name
/// to as script of its own (`ssh host "vi {file}"`, `vim -c 'e {file}'`)
/// reads it as such: that is the template's to avoid.
#[derive(Clone, Debug, PartialEq)]
pub struct OpenCommand {
    pub script: String,
    pub file: String,
}

impl OpenCommand {
    /// The process to run, in `cwd`.
    pub fn process(&self, cwd: &Path) -> std::process::Command {
        let mut command = std::process::Command::new("sh");
        command.arg("-c").arg(&self.script).arg("sh").arg(&self.file).current_dir(cwd);
        command
    }
}

/// Where a template's text stands as `sh` reads it.
#[derive(Clone, Copy, PartialEq)]
enum Quoting {
    None,
    Single,
    Double,
}

/// Why a template's `{file}` cannot be filled in safely: where its quoting
/// is more than plain quotes and backslashes can say.
const UNSURE: &str = "a {file} after $(…), `…`, $'…' or a # comment cannot be filled in safely; \
                      write \"$1\" there (the file is the shell's first argument)";

/// Fill in `{file}`, `{line}` and `{end_line}`: the file as a reference to
/// the shell's first argument, written for where it stands (bare, inside
/// `"…"` or inside `'…'`), so that a name with spaces or quotes stays one
/// argument; one starting with `-` or `+` is passed as `./…`, so that no
/// command reads it as an option or as vi's `+command`. A template whose
/// quoting this cannot follow is refused (`UNSURE`).
pub fn expand(template: &str, file: &str, line: usize, end_line: usize) -> Result<OpenCommand, String> {
    let file = if file.starts_with(['-', '+']) { format!("./{file}") } else { file.to_string() };
    let numbers = [("{end_line}", end_line.to_string()), ("{line}", line.to_string())];
    // One pass over the template: a placeholder is replaced once, and the
    // name is never put into the script at all.
    let mut script = String::with_capacity(template.len() + 16);
    let (mut quoting, mut unsure) = (Quoting::None, false);
    let mut rest = template;
    while let Some(c) = rest.chars().next() {
        if rest.starts_with("{file}") {
            if unsure {
                return Err(UNSURE.to_string());
            }
            script.push_str(match quoting {
                Quoting::None => "\"${1}\"",
                Quoting::Double => "${1}",
                Quoting::Single => "'\"${1}\"'",
            });
            rest = &rest["{file}".len()..];
            continue;
        }
        if let Some((name, value)) = numbers.iter().find(|(name, _)| rest.starts_with(name)) {
            script.push_str(value);
            rest = &rest[name.len()..];
            continue;
        }
        // Command substitution starts its own quoting; `$'…'` and comments
        // are not plain quotes. Past one, a placeholder's place is unknown.
        // A word starts after a blank and after an operator (`true;#…` is a
        // comment too); one escaped (`\;#`) counts as well, which only
        // refuses more.
        let word_start = script.chars().next_back().is_none_or(|p| p.is_whitespace() || ";&|()<>".contains(p));
        unsure |= quoting != Quoting::Single
            && (rest.starts_with("$(") || rest.starts_with('`') || rest.starts_with("$'"))
            || quoting == Quoting::None && c == '#' && word_start;
        let escaped = c == '\\' && quoting != Quoting::Single;
        if escaped && rest[1..].starts_with("{file}") {
            return Err("a {file} after a backslash is not filled in; remove the backslash".into());
        }
        quoting = match (quoting, c) {
            (Quoting::None, '\'') => Quoting::Single,
            (Quoting::None, '"') => Quoting::Double,
            (Quoting::Single, '\'') | (Quoting::Double, '"') => Quoting::None,
            (q, _) => q,
        };
        // A backslash outside single quotes takes the next character as it is.
        let taken = if escaped { rest.chars().take(2).map(char::len_utf8).sum() } else { c.len_utf8() };
        script.push_str(&rest[..taken]);
        rest = &rest[taken..];
    }
    if quoting != Quoting::None {
        return Err("the command ends inside quotes".into());
    }
    Ok(OpenCommand { script, file })
}

/// What one picker row shows.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// `path:line`, the path relative to the current directory.
    pub location: String,
    /// The line shown: the chunk's line that best matches the query, which
    /// Enter opens and prints (its first line sat beside another's text).
    pub line: usize,
    /// The number shown, which the rows are ordered by and whose band
    /// colors it (`HitRecord::shown`, the fit).
    pub fit: f64,
    /// The chunk's line that best matches the query, trimmed, tabs as spaces.
    pub snippet: String,
}

/// A hit's row, its control characters shown (`^J`, `^[`) as vg-format
/// shows them: the list dropped them, so a name holding a newline read as
/// two hits, one with a score of its own.
pub fn row(hit: &HitRecord, cwd: &Path) -> Row {
    let line = best_lines(hit, 1).first().copied().unwrap_or(hit.start_line);
    let snippet = hit.text.split('\n').nth(line - hit.start_line).unwrap_or("").trim().replace('\t', "    ");
    let location = format!("{}:{}", display_path(hit, cwd), line);
    Row { location: shown(&location), line, fit: hit.shown(), snippet: shown(&snippet) }
}

/// `text` as the list shows it: control characters made visible.
pub fn shown(text: &str) -> String {
    crate::format::escape_controls(text).into_owned()
}

/// Most lines of a file the preview holds around a hit.
const PREVIEW_CONTEXT: usize = 400;

/// The most of a file read for a preview: an indexed file is at most
/// `max_filesize` (1 MiB unless raised); one a FIFO or `/dev/zero` replaced
/// since would block the picker or never end, and shows the hit's text.
const MAX_PREVIEW_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// The preview of a hit: numbered lines of the file around it, with the
/// hit's lines marked, and the line to scroll to so that the hit shows a
/// third of the way down a pane `height` lines tall. When the file cannot be
/// read any more, or no longer reaches the hit's lines (cut short since it
/// was indexed, when the pane showed nothing), the chunk's own text stands in.
pub fn preview(hit: &HitRecord, root: &Path, height: usize, color: bool) -> (String, usize) {
    let file = crate::records::file_below(root, &hit.file)
        .and_then(|path| crate::project::small_file::read_small(&path, MAX_PREVIEW_FILE_BYTES).ok().flatten())
        .map(crate::project::decode_text);
    let file_lines = file.as_deref().map(|text| text.lines().collect::<Vec<&str>>());
    let (lines, first): (Vec<&str>, usize) = match file_lines {
        Some(lines) if lines.len() >= hit.end_line => (lines, 1),
        _ => (hit.text.split('\n').collect(), hit.start_line),
    };
    let from = hit.start_line.saturating_sub(PREVIEW_CONTEXT).max(first);
    let to = (hit.end_line + PREVIEW_CONTEXT).min(first + lines.len().saturating_sub(1));
    let width = to.to_string().len();
    let mut out = String::new();
    for n in from..=to {
        let Some(text) = lines.get(n - first) else { break };
        // The file's own escape sequences are shown, never obeyed: the
        // preview's colors are the only ones the pane gets.
        let text = crate::format::escape_controls(&text.replace('\t', "    ")).into_owned();
        let inside = (hit.start_line..=hit.end_line).contains(&n);
        match (inside, color) {
            (true, true) => out.push_str(&format!("\x1b[1;33m{n:>width$}\x1b[0m \x1b[1m▌\x1b[0m{text}\n")),
            (true, false) => out.push_str(&format!("{n:>width$} ▌{text}\n")),
            (false, true) => out.push_str(&format!("\x1b[2m{n:>width$}\x1b[0m  {text}\n")),
            (false, false) => out.push_str(&format!("{n:>width$}  {text}\n")),
        }
    }
    let top = hit.start_line.saturating_sub(from).saturating_sub(height / 3);
    (out, top)
}

/// The picker's status line: indexing or fill progress (or readiness), how
/// many chunks have the model's vector (`vectors`) when not all do, the
/// root and the scope.
pub fn status_line(progress: &Progress, chunks: u64, vectors: u64, root: &Path, scope: &[String]) -> String {
    // What the status line quotes (a root's name, an error's words) shows
    // its control characters, never obeys them: skim reads its header as
    // ANSI, and a newline in a directory's name split it.
    let state = match (&progress.error, progress.indexing, progress.total, progress.recomputing) {
        (Some(e), ..) => format!("indexing failed: {}", escape_controls(e)),
        (None, _, _, Some(r)) => format!("recomputing static vectors {}/{} chunks", r.done, r.of),
        (None, true, None, None) if progress.waiting => "waiting for another index run".to_string(),
        (None, true, Some(total), None) => format!("indexing {}/{} files", progress.indexed, total),
        (None, true, None, None) => "indexing: walking".to_string(),
        (None, false, Some(total), _) if progress.filling => format!("filling {}/{} files", progress.indexed, total),
        (None, false, ..) => "ready".to_string(),
    };
    let vectors = if vectors < chunks { format!(" ({vectors} with the model's vectors)") } else { String::new() };
    let scope = if scope.iter().all(|s| s.is_empty()) { "everything".to_string() } else { scope.join(" ") };
    let root = root.display().to_string();
    format!("{state} · {chunks} chunks{vectors} · root {} · scope {}", escape_controls(&root), escape_controls(&scope))
}

/// A result the user chose (under the cursor, or marked), to be found again
/// when the list is refreshed for the same query (an index run, a fill):
/// the rows move, and Enter opened whatever had taken the chosen one's row,
/// or a mark kept the old result, at a line an edit had since moved
/// (audit 182).
#[derive(Clone, Debug, PartialEq)]
pub struct Chosen {
    file: String,
    text: String,
}

impl Chosen {
    pub fn of(hit: &HitRecord) -> Chosen {
        Chosen { file: hit.file.clone(), text: hit.text.clone() }
    }

    /// Where it is among `results`: the same chunk
    /// (its file and text, wherever an edit above it moved it), else a
    /// chunk of the same file holding all of it, or held by it (lines
    /// written next to it joined its chunk). Else it is gone: no other
    /// result takes its place, though at its line number or showing the
    /// same line (reviews 185 and 187: a mark moved so to a result never
    /// marked, which Enter printed).
    pub fn find_in(&self, results: &[&HitRecord]) -> Option<usize> {
        let same_file = |hit: &HitRecord| hit.file == self.file;
        let at = |test: &dyn Fn(&HitRecord) -> bool| results.iter().position(|h| same_file(h) && test(h));
        // Most of the one held by the other: a line as common as `pass` or
        // `}` is in many chunks, and names none of them.
        let holds = |h: &HitRecord| {
            let (small, large) =
                if h.text.len() < self.text.len() { (&h.text, &self.text) } else { (&self.text, &h.text) };
            !small.trim().is_empty() && small.len() * 2 >= large.len() && large.contains(small.as_str())
        };
        at(&|h| h.text == self.text).or_else(|| at(&|h| !h.text.trim().is_empty() && holds(h)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{score_band, ScoreBand};

    fn hit(text: &str, start: usize) -> HitRecord {
        HitRecord {
            v: 1,
            root: Some("/r".into()),
            file: "src/up load.rs".into(),
            start_line: start,
            end_line: start + text.split('\n').count() - 1,
            score: 0.52,
            relevance: Some(0.91),
            fit: Some(0.7211),
            text: text.into(),
            query: Some("retry uploads".into()),
            concepts: Vec::new(),
            rev: None,
            reasoning: None,
            project: None,
            best_start_line: None,
            best_end_line: None,
        }
    }

    #[test]
    fn the_open_plan_follows_config_then_editor_then_prints() {
        let plan = |cmd, visual, editor, tty, n| open_plan(cmd, visual, editor, tty, n);
        let command = |template: &str, from, written: &str| OpenPlan::Command {
            template: template.into(),
            from,
            written: written.into(),
        };
        assert_eq!(
            plan(Some("nvim +{line} {file}"), Some("vi"), None, true, 1),
            command("nvim +{line} {file}", "open_cmd", "nvim +{line} {file}")
        );
        assert_eq!(plan(None, Some("vim"), Some("nano"), true, 1), command("vim +{line} \"$1\"", "VISUAL", "vim"));
        assert_eq!(
            plan(None, None, Some("code --wait"), true, 1),
            command("code --wait --goto \"$1\":{line}", "EDITOR", "code --wait")
        );
        assert_eq!(plan(None, None, None, true, 1), OpenPlan::Print);
        assert_eq!(
            plan(None, Some(" "), Some("vim"), true, 1),
            command("vim +{line} \"$1\"", "EDITOR", "vim"),
            "VISUAL= is unset"
        );
        assert_eq!(plan(Some("x"), None, None, false, 1), OpenPlan::Print, "not a terminal");
        assert_eq!(plan(Some("x"), None, None, true, 3), OpenPlan::Print, "several picked");
        assert_eq!(editor_template("/usr/bin/hx"), "/usr/bin/hx \"$1\":{line}");
    }

    #[test]
    fn an_editor_is_the_users_shell_text_and_gets_the_file_as_one_argument() {
        // Audit 182: `VISUAL='$(command -v vi)'` was refused as an open_cmd.
        let print = "$(echo printf) '<%s>'";
        for name in ["it's here.rs", "$(touch pwned).rs", "-rf.py"] {
            let got = opened(&editor_template(print), name);
            let shown = if name.starts_with('-') { format!("./{name}") } else { name.to_string() };
            assert_eq!(got, format!("<+3><{shown}>"), "{name}");
        }
    }

    /// What `sh` runs for `template` with `file`: the arguments it is given.
    fn opened(template: &str, file: &str) -> String {
        let dir = tempfile::tempdir().unwrap();
        let out = expand(template, file, 3, 9).unwrap().process(dir.path()).output().unwrap();
        assert!(out.status.success(), "{out:?}");
        assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none(), "{template} with {file} wrote a file");
        String::from_utf8(out.stdout).unwrap()
    }

    #[test]
    fn a_file_name_reaches_the_command_as_one_argument_whatever_the_quotes() {
        let print = "printf '<%s>' ";
        for name in ["src/a.rs", "it's here.rs", "$(touch pwned).rs", "`touch pwned`\"'.rs", "a  b*.rs", "{line}.py"] {
            for template in ["{file}", "\"{file}\"", "'{file}'", "\"at {file}\"", "x'{file}'y"] {
                let got = opened(&format!("{print}{template} {{line}}"), name);
                let expected = template.replace(['"', '\''], "").replace("{file}", name);
                assert_eq!(got, format!("<{expected}><3>"), "{template} with {name}");
            }
        }
        assert_eq!(opened("printf '<%s>' {file}", "-rf.py"), "<./-rf.py>");
        assert_eq!(opened("printf '<%s>' {file}", "+:!touch pwned.py"), "<./+:!touch pwned.py>", "vi's +command");
        // An escaped quote does not open a quoted stretch.
        assert_eq!(opened("printf '<%s>' \\\"{file}", "a b"), "<\"a b>");
        assert_eq!(opened("printf '<%s>' {line}-{end_line}", "a"), "<3-9>");
    }

    #[test]
    fn a_template_whose_quoting_cannot_be_followed_is_refused() {
        for template in [
            "cd \"$(dirname {file})\" && vi {file}",
            "vi `echo {file}`",
            "echo $'\\'' \"{file}\"",
            "vi {line} # \" and\nvi {file}",
            // A comment begins after an operator too.
            "true;#\"\nprintf '<%s>' {file}\n#\"",
            "true&&#'\nvi {file}\n#'",
            "vi \\{file}",
            "vi \"{file}",
        ] {
            assert!(expand(template, "a b", 1, 1).is_err(), "{template}");
        }
        // What follows the file is no matter; nor is a # inside a word.
        assert!(expand("vi {file} && echo \"$(date)\"", "a", 1, 1).is_ok());
        assert!(expand("vi +{line} a#b {file}", "a", 1, 1).is_ok());
    }

    #[test]
    fn a_row_shows_the_location_of_the_best_line() {
        let h = hit("let x = 1;\n\tfn retry_upload() {", 40);
        let r = row(&h, Path::new("/r/src"));
        assert_eq!((r.location.as_str(), r.line), ("up load.rs:41", 41));
        assert_eq!(r.snippet, "fn retry_upload() {");
        // The fit is shown and colored, not the cosine (0.52, fair).
        assert_eq!(r.fit, 0.7211);
        assert_eq!(score_band(r.fit), ScoreBand::Strong);
        // A name's newline and a line's escape sequence are shown, not obeyed.
        let mut h = hit("\x1b]0;owned\x07fn retry_upload() {", 40);
        h.file = "n\nfake.rs:1  0.99  injected.rs".into();
        let r = row(&h, Path::new("/r"));
        assert_eq!(r.location, "n^Jfake.rs:1  0.99  injected.rs:40");
        assert_eq!(r.snippet, "^[]0;owned^Gfn retry_upload() {");
    }

    #[test]
    fn the_preview_marks_the_hit_and_scrolls_to_it() {
        let dir = tempfile::tempdir().unwrap();
        let text: String = (1..=100).map(|i| format!("line {i}\n")).collect();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/up load.rs"), text).unwrap();
        let h = hit("line 50\nline 51", 50);
        let (shown, top) = preview(&h, dir.path(), 30, false);
        let lines: Vec<&str> = shown.lines().collect();
        assert_eq!(lines.len(), 100);
        assert_eq!(lines[49], " 50 ▌line 50");
        assert_eq!(lines[51], " 52  line 52");
        assert_eq!(top, 39, "line 50 a third of the way down 30 lines");
        // A file gone from disk: the chunk stands in.
        let (shown, _) = preview(&h, Path::new("/nonexistent"), 30, false);
        assert_eq!(shown, "50 ▌line 50\n51 ▌line 51\n");
        // A file cut short since, above the hit's last line: the chunk
        // stands in (the pane scrolled past the file's end to nothing).
        let short: String = (1..=50).map(|i| format!("line {i}\n")).collect();
        std::fs::write(dir.path().join("src/up load.rs"), short).unwrap();
        let (shown, top) = preview(&h, dir.path(), 30, false);
        assert_eq!((shown.as_str(), top), ("50 ▌line 50\n51 ▌line 51\n", 0));
        // The file's escape sequences are shown, not obeyed by the pane.
        std::fs::write(dir.path().join("src/up load.rs"), "x\n\x1b[41mred\x1b[0m\n").unwrap();
        let (shown, _) = preview(&hit("x", 1), dir.path(), 30, true);
        assert!(shown.ends_with("  ^[[41mred^[[0m\n"), "{shown:?}");
        // A FIFO where the file was is never opened: the chunk stands in.
        let fifo = dir.path().join("src/up load.rs");
        std::fs::remove_file(&fifo).unwrap();
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        let (shown, _) = preview(&h, dir.path(), 30, false);
        assert_eq!(shown, "50 ▌line 50\n51 ▌line 51\n");
    }

    #[test]
    fn the_status_line_says_progress_root_and_scope() {
        let p = Progress { indexing: true, indexed: 3, total: Some(9), ..Default::default() };
        assert_eq!(
            status_line(&p, 40, 40, Path::new("/r"), &["".into()]),
            "indexing 3/9 files · 40 chunks · root /r · scope everything"
        );
        let p = Progress { ran: true, ..Default::default() };
        assert_eq!(
            status_line(&p, 40, 40, Path::new("/r"), &["src".into(), "lib".into()]),
            "ready · 40 chunks · root /r · scope src lib"
        );
        let p = Progress { ran: true, filling: true, indexed: 2, total: Some(7), ..Default::default() };
        assert_eq!(
            status_line(&p, 40, 10, Path::new("/r"), &["".into()]),
            "filling 2/7 files · 40 chunks (10 with the model's vectors) · root /r · scope everything"
        );
        let recomputing = Some(crate::live::Recomputing { done: 1024, of: 6400 });
        let p = Progress { indexing: true, recomputing, ..Default::default() };
        assert_eq!(
            status_line(&p, 6400, 0, Path::new("/r"), &["".into()]),
            "recomputing static vectors 1024/6400 chunks · 6400 chunks (0 with the model's vectors) · root /r · scope everything"
        );
        // Another run's lock waited for, not a walk that takes its time.
        let p = Progress { indexing: true, waiting: true, ..Default::default() };
        assert_eq!(
            status_line(&p, 40, 40, Path::new("/r"), &["".into()]),
            "waiting for another index run · 40 chunks · root /r · scope everything"
        );
        // A root's name is shown, never obeyed: skim reads the header as ANSI.
        let p = Progress { ran: true, ..Default::default() };
        let line = status_line(&p, 1, 1, Path::new("/r\x1b]0;TITLE\x07X\nY"), &["a\nb".into()]);
        assert!(!line.contains(['\x1b', '\x07', '\n']), "{line:?}");
        assert!(line.contains("root /r^[]0;TITLE^GX^JY · scope a^Jb"), "{line:?}");
    }

    #[test]
    fn a_chosen_result_is_found_again_by_its_chunk_not_its_place() {
        let hit_at = |file: &str, start: usize, text: &str| {
            let mut h = hit(text, start);
            h.file = file.into();
            h
        };
        let old = hit_at("db.py", 3, "def connect_database(url):\n    return 1");
        let chosen = Chosen::of(&old);
        let moved = hit_at("db.py", 8, "def connect_database(url):\n    return 1");
        let grown = hit_at("db.py", 8, "#\ndef connect_database(url):\n    return 1");
        let edited = hit_at("db.py", 8, "def connect_database(url):\n    return 2");
        let other = hit_at("parse.py", 3, "def connect_database(url):\n    return 1");
        let find = |hits: &[&HitRecord]| chosen.find_in(hits);
        assert_eq!(find(&[&other, &moved]), Some(1), "the same chunk, moved by an edit above it");
        assert_eq!(find(&[&other, &grown]), Some(1), "its chunk, lines written beside it joined");
        assert_eq!(find(&[&other]), None, "another file's copy is another result");
        assert_eq!(find(&[&edited]), None, "edited, it is another result: dropped, not guessed");
        // Review 187: another result showing the same line is not it.
        let sibling = hit_at("db.py", 3, "def close_database(conn):\n    return 1");
        assert_eq!(find(&[&sibling]), None);
        // A line as common as `pass` names no chunk that holds it.
        let pass = Chosen::of(&hit_at("db.py", 9, "pass"));
        let holder = hit_at("db.py", 2, "def stub():\n    \"\"\"Not yet.\"\"\"\n    pass");
        assert_eq!(pass.find_in(&[&holder]), None);
    }
}
