//! What a tool writes: stdout whose errors name it, text made safe for a
//! terminal, notes on stderr under the name the user typed.

use std::io::{self, IsTerminal, Write};

use anyhow::Result;
use vecgrep::format::escape_controls;

/// Set by `vecgrep` on the tools it runs: their messages go under its name,
/// the command the user typed.
pub const RUN_BY_ENV: &str = "VECGREP_RUN_BY";

/// Set by `vecgrep --answer` on its search (vg-query): the search an
/// answer is made from is held to `privacy_mode` as the answer is.
pub const ANSWERING_ENV: &str = "VECGREP_ANSWERING";

/// Set by `vecgrep` on the tools its results are piped to (vg-answer,
/// vg-format) when it searched a catalog, named by `--catalog` or the
/// default context: the catalog searched, whose config they read
/// (`catalog_of_hits`), which a project in two catalogs left unknown.
pub const CATALOG_SEARCHED_ENV: &str = "VECGREP_CATALOG_SEARCHED";

/// Set by `vecgrep` on the tools after the first of a pipeline, which has
/// said what of the project's config it passed over: one note, not one per tool.
pub const CONFIG_NOTED_ENV: &str = "VECGREP_CONFIG_NOTED";

/// The name a tool's errors and notes go under: `vecgrep` when the
/// porcelain ran it, its own otherwise.
pub fn shown_name(tool: &str) -> &str {
    match std::env::var(RUN_BY_ENV) {
        Ok(by) if by == "vecgrep" => "vecgrep",
        _ => tool,
    }
}

/// `written`, or nothing when it failed because the reader of stdout left:
/// what a tool writes after its work is done must not turn the work's
/// outcome (an error, an interrupt) into a closed pipe's success.
pub fn unless_reader_gone(written: io::Result<()>) -> Result<()> {
    match written {
        Err(e) if reader_gone(&e) => Ok(()),
        other => Ok(other?),
    }
}

pub(super) fn reader_gone(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::BrokenPipe && stdout_reader_gone()
}

/// Whether an error is a write to a pipe whose reader has gone (`| head`):
/// a broken pipe, and stdout's reader gone. A broken pipe of another
/// connection (a database the server hung up) is an error like any other;
/// it used to end a run with status 0 and nothing said.
pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().filter_map(|c| c.downcast_ref::<io::Error>()).any(reader_gone)
}

/// Whether stdout is a pipe or socket whose reading end is closed: polling
/// it says so (POLLERR, POLLHUP) without writing to it.
#[allow(unsafe_code)]
pub fn stdout_reader_gone() -> bool {
    let mut fd = libc::pollfd { fd: libc::STDOUT_FILENO, events: libc::POLLOUT, revents: 0 };
    // SAFETY: one pollfd, owned here, for the duration of the call; a zero
    // timeout returns at once.
    let ready = unsafe { libc::poll(&mut fd, 1, 0) };
    ready > 0 && fd.revents & (libc::POLLERR | libc::POLLHUP) != 0
}

/// Standard output, locked, whose write errors say it was stdout that
/// failed ("cannot write to stdout: No space left on device"): a bare OS
/// error does not say which of the files a tool writes it was. The error's
/// kind is kept, so a reader gone (`| head`) is still told apart.
pub fn stdout() -> Stdout {
    Stdout(io::stdout().lock())
}

pub struct Stdout(io::StdoutLock<'static>);

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf).map_err(on_stdout)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush().map_err(on_stdout)
    }
}

/// Standard output for text meant to be read (vg-root's, `--stats`',
/// vg-catalog's): on a terminal, the control characters a path or an
/// index's own text may hold (a title or clipboard write, a screen clear)
/// are shown as `^[`…, never obeyed; in a pipe the bytes are as they are,
/// so `cd "$(vg-root)"` still works. Records (`json`) are written as they are.
pub fn text_stdout(json: bool) -> TextStdout {
    TextStdout { out: stdout(), escape: !json && io::stdout().is_terminal() }
}

/// `text_stdout`'s writer.
pub struct TextStdout {
    out: Stdout,
    escape: bool,
}

impl Write for TextStdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if !self.escape {
            return self.out.write(buf);
        }
        // A newline that ends what is written ends a line (`write_fmt`
        // hands over a whole line); one inside is a value's, shown (`^J`),
        // so that a path cannot forge a line of its own
        // ("index:    /etc/passwd").
        let text = String::from_utf8_lossy(buf);
        let (text, end) = text.strip_suffix('\n').map_or((&*text, ""), |text| (text, "\n"));
        self.out.write_all(escape_controls(text).as_bytes())?;
        self.out.write_all(end.as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// A line is formatted whole before it is written: `writeln!` hands a
    /// value apart from its line's end, so a value that itself ended in a
    /// newline (a directory named `tail\n`) was taken for the line's end
    /// and broke the line. Whole, only the last newline ends it.
    fn write_fmt(&mut self, args: std::fmt::Arguments<'_>) -> io::Result<()> {
        if !self.escape {
            return self.out.write_fmt(args);
        }
        self.write_all(args.to_string().as_bytes())
    }
}

fn on_stdout(e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("cannot write to stdout: {e}"))
}

/// Print a note on stderr unless quiet.
pub fn note(tool: &str, quiet: bool, message: &str) {
    if !quiet {
        say_line(tool, message);
    }
}

/// One line on stderr under the tool's shown name, its control characters
/// made visible as results show them: the names of a repository's files
/// reach the terminal here too, and one holding ESC must not drive it.
pub fn say_line(tool: &str, message: &str) {
    let clipped = vecgrep::project::shown::clipped(message, MAX_SAID_CHARS);
    let said = escape_controls(&clipped);
    // One write: stderr is unbuffered, and a line written in pieces took
    // another writer's words between them (ONNX Runtime's complaints, a
    // reply on a shared stream).
    let _ = io::stderr().write_all(format!("{}: {said}\n", shown_name(tool)).as_bytes());
}

/// The most characters of a line said on stderr: far above any message a
/// tool writes, whose values from outside are clipped where they are
/// quoted; this bounds one that a cause quotes whole (another library's
/// words about a reply of a megabyte).
const MAX_SAID_CHARS: usize = 4000;

/// Whether to color output for `choice` on stdout.
pub fn use_color(choice: crate::cli::ColorChoice) -> bool {
    match choice {
        crate::cli::ColorChoice::Always => true,
        crate::cli::ColorChoice::Never => false,
        // A terminal that says it is dumb (Emacs' shell), or says nothing
        // of itself (TERM unset), may show escapes as text: no color there,
        // as ripgrep decides.
        crate::cli::ColorChoice::Auto => {
            io::stdout().is_terminal()
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && std::env::var_os("TERM").is_some_and(|t| !t.is_empty() && t != "dumb")
        }
    }
}
