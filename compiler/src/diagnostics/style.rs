//! Colour for rendered diagnostics on a terminal: the plain text of
//! [`super::Diagnostics::render`] with ANSI styles added by line shape, so the
//! wording and layout stay in one place and the plain output (files, pipes,
//! tests, `NO_COLOR`) is exactly what is coloured. The driver decides when.

const RESET: &str = "\x1b[0m";
const ERROR: &str = "\x1b[1;31m";
const BOLD: &str = "\x1b[1m";
const GUTTER: &str = "\x1b[1;34m";
const NOTE: &str = "\x1b[1;36m";

/// `text` (rendered diagnostics) with ANSI colours.
pub fn styled(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 5 / 4);
    for line in text.split_inclusive('\n') {
        let (body, newline) = match line.strip_suffix('\n') {
            Some(b) => (b, "\n"),
            None => (line, ""),
        };
        out.push_str(&style_line(body));
        out.push_str(newline);
    }
    out
}

fn style_line(line: &str) -> String {
    // `error: ...` (the closing line) and `LOC: error: ...` (a header).
    if let Some(rest) = line.strip_prefix("error:") {
        return format!("{ERROR}error{RESET}{BOLD}:{rest}{RESET}");
    }
    if let Some(at) = line.find(": error:")
        && !line[..at].contains(' ')
    {
        let (loc, rest) = (&line[..at], &line[at + ": error:".len()..]);
        return format!("{BOLD}{loc}:{RESET} {ERROR}error{RESET}{BOLD}:{rest}{RESET}");
    }
    // `12 | code`, `   | ^^^ label`, `   = note: ...`
    let trimmed = line.trim_start();
    let digits = trimmed.chars().take_while(char::is_ascii_digit).count();
    let after = trimmed[digits..].trim_start();
    if let Some(rest) = after.strip_prefix("= note:") {
        let gutter = &line[..line.len() - after.len()];
        return format!("{GUTTER}{gutter}={RESET} {NOTE}note{RESET}:{rest}");
    }
    if let Some(rest) = after.strip_prefix('|') {
        let gutter = &line[..line.len() - after.len()];
        let marks = rest.trim_start();
        let code_line = digits > 0;
        let styled_rest = if !code_line && marks.starts_with('^') {
            let pad = &rest[..rest.len() - marks.len()];
            format!("{pad}{ERROR}{marks}{RESET}")
        } else if !code_line && (marks.starts_with('-') || marks.starts_with('|')) {
            let pad = &rest[..rest.len() - marks.len()];
            format!("{pad}{GUTTER}{marks}{RESET}")
        } else {
            rest.to_string()
        };
        return format!("{GUTTER}{gutter}|{RESET}{styled_rest}");
    }
    line.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_gutter_and_carets_are_coloured_and_nothing_else_changes() {
        let plain = "p.tern:2:18: error: mismatched types\n2 |     let x: i64 = true;\n  |                  ^^^^\n";
        let styled = styled(plain);
        assert_eq!(
            styled,
            "\x1b[1mp.tern:2:18:\x1b[0m \x1b[1;31merror\x1b[0m\x1b[1m: mismatched types\x1b[0m\n\
             \x1b[1;34m2 |\x1b[0m     let x: i64 = true;\n\
             \x1b[1;34m  |\x1b[0m                  \x1b[1;31m^^^^\x1b[0m\n"
        );
        // Without the escapes, the text is the plain one.
        let stripped = styled
            .split('\x1b')
            .enumerate()
            .map(|(i, part)| {
                if i == 0 {
                    part
                } else {
                    &part[part.find('m').unwrap() + 1..]
                }
            })
            .collect::<String>();
        assert_eq!(stripped, plain);
        assert_eq!(
            super::styled("error: could not compile `p.tern`: 1 error"),
            "\x1b[1;31merror\x1b[0m\x1b[1m: could not compile `p.tern`: 1 error\x1b[0m"
        );
    }

    #[test]
    fn notes_and_labels() {
        let styled = styled("  = note: see here\n  |   --- defined here\n");
        assert_eq!(
            styled,
            "\x1b[1;34m  =\x1b[0m \x1b[1;36mnote\x1b[0m: see here\n\
             \x1b[1;34m  |\x1b[0m   \x1b[1;34m--- defined here\x1b[0m\n"
        );
    }
}
