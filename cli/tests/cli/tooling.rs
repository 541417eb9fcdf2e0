//! What makes `etcdlock` install like a tool: shell completions that load, a man page that
//! renders, `--version` with the commit, and `elect --observe --json` for scripts.

use crate::common::*;
use std::process::{Command, Stdio};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(30);

fn have(program: &str) -> bool {
    Command::new("sh").args(["-c", &format!("command -v {program}")]).stdout(Stdio::null()).status().is_ok_and(|s| s.success())
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

// covers: CLI-COMPLETE-001
#[test]
fn completions_load_in_bash_and_complete_subcommands_and_options() {
    let bin = env!("CARGO_BIN_EXE_etcdlock");
    let dir = std::path::Path::new(bin).parent().unwrap().to_string_lossy().into_owned();
    // Loaded as a user's shell would; then completing `etcdlock ru` and `etcdlock run --hea`.
    let script = "source <(etcdlock completions bash) && complete -p etcdlock && \
        COMP_WORDS=(etcdlock ru); COMP_CWORD=1; _etcdlock etcdlock ru etcdlock; echo \"words: ${COMPREPLY[*]}\"; \
        COMP_WORDS=(etcdlock run --hea); COMP_CWORD=2; _etcdlock etcdlock --hea run; echo \"options: ${COMPREPLY[*]}\"";
    let path = format!("{dir}:{}", std::env::var("PATH").unwrap_or_default());
    let out = wait_output(Command::new("bash").args(["-c", script]).env("PATH", path).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap(), LIMIT);
    let text = stdout(&out);
    assert_eq!(code(&out), 0, "{text}{}", stderr(&out));
    assert!(text.lines().next().is_some_and(|l| l.starts_with("complete ") && l.ends_with(" etcdlock")), "complete -p: {text}");
    assert!(text.contains("words: run"), "{text}");
    assert!(text.contains("options: --health-addr"), "{text}");

    let zsh = output(&["completions", "zsh"], LIMIT);
    assert!(code(&zsh) == 0 && stdout(&zsh).starts_with("#compdef etcdlock"), "{}", stdout(&zsh));
    let fish = output(&["completions", "fish"], LIMIT);
    assert!(code(&fish) == 0 && stdout(&fish).contains("complete -c etcdlock"), "{}", stdout(&fish));
    // Syntax-checked by the shells themselves where they are installed.
    for (shell, text) in [("zsh", stdout(&zsh)), ("fish", stdout(&fish))] {
        if !have(shell) {
            eprintln!("{shell} is not installed: its script is not syntax-checked");
            continue;
        }
        let mut check = Command::new(shell).arg("-n").stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        std::io::Write::write_all(&mut check.stdin.take().unwrap(), text.as_bytes()).unwrap();
        let out = wait_output(check, LIMIT);
        assert_eq!(code(&out), 0, "{shell} -n: {}", stderr(&out));
    }
    let bad = output(&["completions", "tcsh"], LIMIT);
    assert_eq!(code(&bad), 2, "{}", stderr(&bad));
    assert_eq!(stderr(&bad).trim().lines().count(), 1, "{}", stderr(&bad));
}

// covers: CLI-MAN-001
#[test]
fn the_man_page_renders_and_the_pages_of_each_command_are_written() {
    let page = output(&["man"], LIMIT);
    assert_eq!(code(&page), 0, "{}", stderr(&page));
    let roff = stdout(&page);
    assert!(roff.contains(".TH etcdlock 1") && roff.contains(".SH SUBCOMMANDS"), "{roff}");
    if have("man") {
        let mut man = Command::new("man");
        man.args(["-l", "-"]).env("MANPAGER", "cat").env("MANWIDTH", "100");
        let mut man = man.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        std::io::Write::write_all(&mut man.stdin.take().unwrap(), roff.as_bytes()).unwrap();
        let out = wait_output(man, LIMIT);
        let text = stdout(&out);
        assert_eq!(code(&out), 0, "man -l -: {}", stderr(&out));
        assert!(!stderr(&out).contains("warning"), "man -l -: {}", stderr(&out));
        for want in ["NAME", "etcdlock - Distributed locks", "SYNOPSIS", "SUBCOMMANDS", "etcdlock-run(1)", "etcdlock-completions(1)"] {
            assert!(text.contains(want), "{want:?} not in the rendered page:\n{text}");
        }
    } else {
        eprintln!("man is not installed: the page is not rendered");
    }
    let dir = Dir::new("man");
    let out = output(&["man", "--out-dir", &dir.0.to_string_lossy()], LIMIT);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    for page in ["etcdlock.1", "etcdlock-run.1", "etcdlock-elect.1", "etcdlock-status.1", "etcdlock-queue-work.1", "etcdlock-man.1"] {
        assert!(!dir.read(page).is_empty(), "{page} was not written");
    }
    assert!(dir.read("etcdlock-run.1").contains("health\\-addr"), "the run page names --health-addr");
    let bad = output(&["man", "--out-dir", &dir.file("missing")], LIMIT);
    assert_eq!(code(&bad), 2, "{}", stderr(&bad));
}

// covers: CLI-VERSION-001
#[test]
fn version_names_the_commit_it_was_built_from() {
    let out = output(&["--version"], LIMIT);
    assert_eq!(code(&out), 0);
    let line = stdout(&out).trim().to_string();
    let commit = line
        .strip_prefix(&format!("etcdlock {} (commit ", env!("CARGO_PKG_VERSION")))
        .and_then(|r| r.strip_suffix(')'))
        .unwrap_or_else(|| panic!("{line:?}"));
    // Built in a git checkout (as here): a commit of this repository; elsewhere "unknown".
    let git = |args: &[&str]| Command::new("git").args(args).current_dir(repo_root()).output().ok().filter(|o| o.status.success());
    if git(&["rev-parse", "HEAD"]).is_some() {
        assert!(commit.len() >= 7 && commit.chars().all(|c| c.is_ascii_hexdigit()), "{line:?}");
        assert!(git(&["cat-file", "-e", &format!("{commit}^{{commit}}")]).is_some(), "{commit} is no commit of this repository");
    } else {
        assert_eq!(commit, "unknown");
    }
    // Subcommands show the same.
    assert_eq!(stdout(&output(&["run", "--version"], LIMIT)).trim(), line.replacen("etcdlock", "etcdlock-run", 1));
}

/// Each JSON line of `lines`, as python3's json module reads it: `leader value fencing_token
/// key lease`, tab-separated ("None" for null).
fn parsed(lines: &[String]) -> Vec<Vec<String>> {
    let program = "import json, sys\nfor l in sys.stdin:\n    o = json.loads(l)\n    assert set(o) == {'name', 'leader', 'value', 'key', 'fencing_token', 'lease'}, o\n    print('\\t'.join(str(o[k]) for k in ('name', 'leader', 'value', 'fencing_token', 'key', 'lease')))\n";
    let mut py = Command::new("python3").args(["-c", program]).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    std::io::Write::write_all(&mut py.stdin.take().unwrap(), (lines.join("\n") + "\n").as_bytes()).unwrap();
    let out = wait_output(py, LIMIT);
    assert_eq!(code(&out), 0, "not JSON: {lines:?}: {}", stderr(&out));
    stdout(&out).lines().map(|l| l.split('\t').map(str::to_string).collect()).collect()
}

// covers: CLI-OBSERVE-JSON-001
#[test]
fn observe_json_prints_one_object_per_leader_change() {
    let name = name("observe-json");
    let mut observer = etcdlock(&["elect", "--observe", "--json", &name]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let rx = stdout_lines(&mut observer);
    let next = || rx.recv_timeout(LIMIT).expect("the observer printed no line");
    let mut seen = vec![next()];
    let mut tokens = Vec::new();
    for proposal in ["first \"one\"", "second"] {
        let mut leader = spawn(&["elect", &name, proposal]);
        let leader_out = stdout_lines(&mut leader);
        let key = leader_out.recv_timeout(LIMIT).expect("the leader never printed its key");
        seen.push(next());
        let row = parsed(&seen).pop().unwrap();
        assert_eq!(row[..3], [name.clone(), "True".into(), proposal.into()], "{seen:?}");
        assert_eq!(row[4], key, "the leader's key");
        assert!(key.ends_with(&format!("/{}", row[5])), "the lease is the key's suffix: {row:?}");
        tokens.push(row[3].parse::<i64>().unwrap());
        signal(leader.id(), libc::SIGTERM);
        assert_eq!(code(&wait_output(leader, LIMIT)), 0);
        seen.push(next());
    }
    let rows = parsed(&seen);
    assert_eq!(rows.len(), 5, "{seen:?}");
    for i in [0, 2, 4] {
        assert_eq!(rows[i], [name.as_str(), "False", "None", "None", "None", "None"], "no leader: {seen:?}");
    }
    assert!(tokens[0] > 0 && tokens[1] > tokens[0], "fencing tokens {tokens:?}");
    signal(observer.id(), libc::SIGINT);
    assert_eq!(code(&wait_output(observer, LIMIT)), 130);
    let usage = output(&["elect", "--json", &name, "p"], LIMIT);
    assert_eq!(code(&usage), 2, "--json without --observe: {}", stderr(&usage));
}
