//! The Tern call stack printed after every runtime error:
//!
//! ```text
//! error: prog.tern:2:12: index out of bounds: index 10, length 4
//!   in inner at prog.tern:2:12
//!   in outer at prog.tern:5:12
//!   in main  at prog.tern:9:11
//! ```
//!
//! Innermost frame first; each frame names its function and the location it
//! was at: the call it made, or (innermost) the operation that failed.
//! Frames come from one of two sources:
//! * [`native`]: compiled code (JIT and AOT). Each program registers a
//!   [`table`] of its functions and call sites; at the failure the unwinder
//!   walks the runtime's own (Rust) frames up to the first Tern frame, and
//!   from there the frame-pointer chain of the Tern frames is followed.
//!   Inlined calls are in the table too, so -O2 prints the same frames as -O0.
//! * [`StackSource`]: a host that runs Tern code without native frames (the
//!   reference interpreter) describes its stack itself.
//!
//! Rendering ([`render`]) is shared, so every mode prints the same text:
//! names are padded to one column, runs of one recursive frame are collapsed
//! (`... 9 996 more frames in down`), and so are repeated cycles of up to
//! [`MAX_CYCLE`] frames (mutual recursion: `... 9 996 more frames cycling
//! through even, odd`); when the innermost frames are in the standard
//! library the first frame of the user's code is marked.

pub mod native;
pub mod table;

use std::cell::Cell;

/// One frame of a Tern call stack.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    /// The function's display name (`main`, `slice_pool::alloc`, `id<i64>`).
    pub name: String,
    /// `file:line:col` of the call (or failing operation) the frame is at.
    pub loc: String,
    /// The function is standard-library code, not the user's.
    pub library: bool,
}

/// A host's own account of the Tern stack (see the module docs).
pub trait StackSource {
    /// The frames, innermost first.
    fn frames(&self) -> Vec<Frame>;
}

thread_local! {
    static SOURCE: Cell<Option<*const dyn StackSource>> = const { Cell::new(None) };
}

/// Runs `f` with `source` answering for this thread's Tern stack.
pub fn with_stack_source<R>(source: &dyn StackSource, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<*const dyn StackSource>);
    impl Drop for Restore {
        fn drop(&mut self) {
            SOURCE.with(|s| s.set(self.0));
        }
    }
    let erased: *const (dyn StackSource + '_) = source;
    // SAFETY: only the lifetime is erased, to store the pointer; the later
    // dereference in `capture` happens only while `f` runs, and `source`
    // outlives this call. `Restore` takes it out again, even on unwinding.
    let erased: *const dyn StackSource = unsafe { std::mem::transmute(erased) };
    let _restore = Restore(SOURCE.with(|s| s.replace(Some(erased))));
    f()
}

/// The Tern stack of the calling thread at a failure: the host's
/// [`StackSource`] if one is installed, else the native frames.
pub fn capture() -> Vec<Frame> {
    match SOURCE.with(Cell::get) {
        // SAFETY: set by `with_stack_source`, whose `source` is alive while
        // it is installed.
        Some(source) => unsafe { (*source).frames() },
        None => native::capture(),
    }
}

/// Repetitions of a frame, or of a cycle of frames, beyond this many are
/// collapsed.
const RUN_SHOWN: usize = 3;

/// The longest cycle of frames that is collapsed (mutual recursion through
/// this many functions).
pub const MAX_CYCLE: usize = 8;

/// The cycle at the start of `frames` that repeats longest: its length and
/// how many times it repeats back to back (a single frame that does not
/// repeat is a cycle of 1 repeated once). Of cycles covering as many frames,
/// the shortest.
fn longest_cycle(frames: &[Frame]) -> (usize, usize) {
    let same = |a: &Frame, b: &Frame| a.name == b.name && a.loc == b.loc;
    let mut best = (1, 1);
    for len in 1..=MAX_CYCLE.min(frames.len()) {
        let mut reps = 1;
        while (reps + 1) * len <= frames.len()
            && (0..len).all(|k| same(&frames[k], &frames[reps * len + k]))
        {
            reps += 1;
        }
        if reps > 1 && reps * len > best.0 * best.1 {
            best = (len, reps);
        }
    }
    best
}

/// `frames` without the innermost frames of a recursion's unfinished turn:
/// when the innermost frames cycle through several functions (`even`,
/// `odd`), which of them a stack overflow lands in depends on how deep the
/// stack is, so the frames are cut where a turn begins as counted from the
/// outermost one. The deepest level's calls from other sites of the
/// recursion's own functions, or into the standard library, go too
/// ([`unfinished_level`]). Frames that do not recur are returned as they are.
pub fn whole_cycles(frames: &[Frame]) -> &[Frame] {
    let frames = &frames[unfinished_level(frames)..];
    let (len, reps) = longest_cycle(frames);
    if reps < 2 || len < 2 {
        return frames;
    }
    let same = |a: &Frame, b: &Frame| a.name == b.name && a.loc == b.loc;
    let whole = reps * len;
    let partial = (0..len)
        .take_while(|&k| whole + k < frames.len() && same(&frames[k], &frames[whole + k]))
        .count();
    &frames[partial..]
}

/// How many innermost frames lie above a deep recursion (one collapsed
/// when shown) and belong to its deepest, unfinished level: frames of the
/// recursion's own functions at other call sites, and standard-library
/// frames. When each level calls the runtime through a library function, a
/// stack overflow lands before that call or before the recursive one
/// depending on how deep the stack is, and the library function is its own
/// frame at -O0 and inlined at -O2: the report starts at the recursion in
/// every mode. A user function outside the recursion stops the cut (its
/// call is where the stack ran out, not the recursion's). 0 when the
/// innermost frame begins the recursion, or no such recursion is found.
fn unfinished_level(frames: &[Frame]) -> usize {
    let deep = |from: usize| {
        let (len, reps) = longest_cycle(&frames[from..]);
        (reps > RUN_SHOWN + 1).then_some(&frames[from..from + len])
    };
    if frames.is_empty() || deep(0).is_some() {
        return 0;
    }
    for p in 1..=MAX_CYCLE.min(frames.len() - 1) {
        if let Some(turn) = deep(p) {
            let of_level = |f: &Frame| f.library || turn.iter().any(|c| c.name == f.name);
            return if frames[..p].iter().all(of_level) {
                p
            } else {
                0
            };
        }
    }
    0
}

/// The backtrace lines (each `  in NAME at LOC\n`), empty for no frames.
pub fn render(frames: &[Frame]) -> String {
    render_with(frames, true)
}

/// [`render`] without the number of collapsed frames (`... more frames in
/// down`): for a stack overflow, whose depth depends on the mode, the
/// optimization level and the stack's size, where the rest does not.
pub fn render_uncounted(frames: &[Frame]) -> String {
    render_with(frames, false)
}

fn render_with(frames: &[Frame], counted: bool) -> String {
    // The first user frame is marked when library frames come before it.
    let marked = match frames.iter().position(|f| !f.library) {
        Some(i) if i > 0 => Some(i),
        _ => None,
    };
    let mut lines: Vec<(String, String)> = Vec::new();
    let mut i = 0;
    while i < frames.len() {
        let (len, reps) = longest_cycle(&frames[i..]);
        let shown = if reps > RUN_SHOWN + 1 {
            RUN_SHOWN
        } else {
            reps
        };
        for (k, g) in frames[i..i + shown * len].iter().enumerate() {
            let mut loc = g.loc.clone();
            if marked == Some(i + k) {
                loc.push_str("  <- your code");
            }
            lines.push((g.name.clone(), loc));
        }
        if shown < reps {
            let hidden = if counted {
                format!("{} more", grouped((reps - shown) * len))
            } else {
                "more".to_string()
            };
            let names: Vec<&str> = frames[i..i + len].iter().map(|f| f.name.as_str()).collect();
            lines.push((
                String::new(),
                match names.as_slice() {
                    [one] => format!("{hidden} frames in {one}"),
                    many => format!("{hidden} frames cycling through {}", many.join(", ")),
                },
            ));
        }
        i += reps * len;
    }
    let width = lines
        .iter()
        .map(|(n, _)| n.chars().count())
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    for (name, loc) in lines {
        if name.is_empty() {
            out.push_str(&format!("  ... {loc}\n"));
        } else {
            out.push_str(&format!("  in {name:width$} at {loc}\n"));
        }
    }
    out
}

/// `9996` as `9 996`: digits in groups of three.
fn grouped(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(name: &str, loc: &str, library: bool) -> Frame {
        Frame {
            name: name.into(),
            loc: loc.into(),
            library,
        }
    }

    #[test]
    fn names_are_padded_to_one_column() {
        let text = render(&[
            frame("inner", "p.tern:2:12", false),
            frame("outer", "p.tern:5:12", false),
            frame("main", "p.tern:9:11", false),
        ]);
        assert_eq!(
            text,
            "  in inner at p.tern:2:12\n  in outer at p.tern:5:12\n  in main  at p.tern:9:11\n"
        );
    }

    #[test]
    fn recursion_is_collapsed() {
        let mut frames = vec![frame("down", "p.tern:3:5", false)];
        frames.extend((0..9_999).map(|_| frame("down", "p.tern:4:12", false)));
        frames.push(frame("main", "p.tern:8:5", false));
        assert_eq!(
            render(&frames),
            "  in down at p.tern:3:5\n  in down at p.tern:4:12\n  in down at p.tern:4:12\n  \
             in down at p.tern:4:12\n  ... 9 996 more frames in down\n  in main at p.tern:8:5\n"
        );
        // A run one longer than shown is printed whole.
        let four: Vec<Frame> = (0..4).map(|_| frame("f", "p.tern:1:1", false)).collect();
        assert_eq!(render(&four).lines().count(), 4);
    }

    #[test]
    fn an_overflow_shows_whole_turns_and_no_count() {
        // Innermost first: the stack ran out in `odd` of one run, in `even`
        // of another (one frame deeper); both read the same.
        let turn = [
            frame("odd", "p.tern:6:12", false),
            frame("even", "p.tern:2:12", false),
        ];
        let mut short: Vec<Frame> = turn.iter().cycle().take(2 * 700).cloned().collect();
        short.push(frame("main", "p.tern:9:5", false));
        let mut long = vec![turn[1].clone()];
        long.extend(short.iter().cloned());
        assert_eq!(whole_cycles(&long), &short[..]);
        assert_eq!(whole_cycles(&short), &short[..]);
        let shown = render_uncounted(whole_cycles(&long));
        assert!(
            shown.ends_with(
                "  ... more frames cycling through odd, even\n  in main at p.tern:9:5\n"
            )
        );
        assert_eq!(shown.lines().count(), 8);
        // A recursion of one function is left whole.
        let one: Vec<Frame> = (0..9).map(|_| frame("f", "p.tern:1:1", false)).collect();
        assert_eq!(whole_cycles(&one).len(), 9);
    }

    #[test]
    fn an_overflow_in_the_deepest_levels_other_calls_starts_at_the_recursion() {
        let mut recursion: Vec<Frame> = (0..50)
            .map(|_| frame("down", "p.tern:4:12", false))
            .collect();
        recursion.push(frame("main", "p.tern:8:5", false));
        let with = |head: &[Frame]| [head, &recursion[..]].concat();
        // The deepest level's call at another site of `down` (a library
        // function's own frame at -O0, inlined at -O2), or inside the
        // library function: cut, as the report of either mode reads.
        let other_site = with(&[frame("down", "p.tern:3:13", false)]);
        assert_eq!(whole_cycles(&other_site), &recursion[..]);
        let in_library = with(&[
            frame("io::arg_count", "stdlib/io.tern:40:5", true),
            frame("down", "p.tern:3:13", false),
        ]);
        assert_eq!(whole_cycles(&in_library), &recursion[..]);
        // A user function outside the recursion is where the stack ran out.
        let helper = with(&[
            frame("big", "p.tern:12:5", false),
            frame("down", "p.tern:3:13", false),
        ]);
        assert_eq!(whole_cycles(&helper), &helper[..]);
        // A shallow recursion is not cut to.
        let shallow = [
            frame("down", "p.tern:3:13", false),
            frame("down", "p.tern:4:12", false),
            frame("down", "p.tern:4:12", false),
            frame("main", "p.tern:8:5", false),
        ];
        assert_eq!(whole_cycles(&shallow), &shallow[..]);
    }

    #[test]
    fn cycles_of_several_frames_are_collapsed() {
        let mut frames = vec![frame("even", "p.tern:2:5", false)];
        for _ in 0..5_000 {
            frames.push(frame("odd", "p.tern:6:12", false));
            frames.push(frame("even", "p.tern:3:12", false));
        }
        frames.push(frame("main", "p.tern:9:5", false));
        assert_eq!(
            render(&frames),
            "  in even at p.tern:2:5\n  in odd  at p.tern:6:12\n  in even at p.tern:3:12\n  \
             in odd  at p.tern:6:12\n  in even at p.tern:3:12\n  in odd  at p.tern:6:12\n  \
             in even at p.tern:3:12\n  ... 9 994 more frames cycling through odd, even\n  \
             in main at p.tern:9:5\n"
        );
        // A cycle of three, and one longer than MAX_CYCLE is left alone.
        let three: Vec<Frame> = (0..300)
            .map(|k| frame(["a", "b", "c"][k % 3], "p.tern:1:1", false))
            .collect();
        assert_eq!(render(&three).lines().count(), 3 * RUN_SHOWN + 1);
        let long: Vec<Frame> = (0..(MAX_CYCLE + 1) * 10)
            .map(|k| frame(&format!("f{}", k % (MAX_CYCLE + 1)), "p.tern:1:1", false))
            .collect();
        assert_eq!(render(&long).lines().count(), long.len());
    }

    #[test]
    fn first_user_frame_is_marked_after_library_frames() {
        let text = render(&[
            frame("slice_pool::free", "stdlib/slice_pool.tern:40:5", true),
            frame("drop", "p.tern:3:5", false),
            frame("main", "p.tern:7:5", false),
        ]);
        assert_eq!(
            text,
            "  in slice_pool::free at stdlib/slice_pool.tern:40:5\n  \
             in drop             at p.tern:3:5  <- your code\n  \
             in main             at p.tern:7:5\n"
        );
        // No mark when the innermost frame is already the user's.
        assert!(!render(&[frame("main", "p.tern:1:1", false)]).contains("<-"));
    }

    #[test]
    fn digits_are_grouped() {
        assert_eq!(grouped(7), "7");
        assert_eq!(grouped(996), "996");
        assert_eq!(grouped(9_996), "9 996");
        assert_eq!(grouped(1_234_567), "1 234 567");
    }
}
