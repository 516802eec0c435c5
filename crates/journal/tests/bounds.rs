//! The journal's bounds and privacy, on real files: the database and its folder are the
//! user's only; the write queue holds a bounded number of bytes (a push waits for room,
//! nothing is dropped, nothing deadlocks under the store's lock); push history is pruned.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};

use chrono::{DateTime, Utc};
use resolve_engine::{
    Change, ChangeSet, ContentHash, CustomToolPendingAction, PendingActionStore, Persist, ResolvePolicy, Session,
    StoredAction, StoredBody, ToolResult,
};
use resolve_journal::{Journal, Push, Writer};

/// A stored edit of `path` holding `size` previewed bytes and `size` bytes to write.
fn big_action(id: &str, size: usize) -> StoredAction {
    let before: Arc<[u8]> = vec![b'a'; size].into();
    StoredAction {
        id: id.into(),
        label: format!("Edit {id}"),
        source_tool_name: "t".into(),
        details: None,
        created_at: DateTime::<Utc>::from_timestamp_millis(1_000).unwrap(),
        origin: None,
        pushed_by: None,
        body: StoredBody::ChangeSet {
            changes: vec![Change::Edit {
                path: format!("{id}.txt"),
                before_hash: ContentHash::of(&before),
                before,
                after: vec![b'b'; size].into(),
            }],
            renames: None,
            applied_text: "Wrote it.".into(),
            discard_text: None,
            replacements: Vec::new(),
            written_by: None,
        },
        comments: Vec::new(),
        review: Default::default(),
    }
}

#[cfg(unix)]
fn mode(path: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

#[cfg(unix)]
#[test]
fn an_existing_journal_readable_by_others_is_made_private_on_open() {
    use std::os::unix::fs::PermissionsExt;
    let top = tempfile::tempdir().unwrap();
    let dir = top.path().join("resolve-desk");
    std::fs::create_dir(&dir).unwrap();
    let path = dir.join("journal.sqlite3");
    drop(Journal::open(&path).unwrap());
    let wal = dir.join("journal.sqlite3-wal");
    std::fs::write(&wal, b"").unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::set_permissions(&wal, std::fs::Permissions::from_mode(0o644)).unwrap();
    let j = Journal::open(&path).unwrap();
    assert_eq!(mode(&path), 0o600, "the database is the user's only");
    assert_eq!(mode(&dir), 0o700, "its folder is the user's only");
    assert_eq!(mode(&wal), 0o600, "an existing -wal is tightened too");
    assert!(j.pending("/w").unwrap().is_empty(), "and it still opens");
}

#[cfg(unix)]
#[test]
fn a_new_journal_and_its_wal_and_shm_files_are_private_from_creation() {
    let top = tempfile::tempdir().unwrap();
    let dir = top.path().join("data/resolve-desk");
    let path = dir.join("journal.sqlite3");
    let j = Journal::open(&path).unwrap();
    j.save_pending("/w", &big_action("pa-1", 10)).unwrap();
    let (wal, shm) = (dir.join("journal.sqlite3-wal"), dir.join("journal.sqlite3-shm"));
    assert!(wal.exists() && shm.exists(), "WAL mode keeps -wal and -shm open beside the database");
    for file in [&path, &wal, &shm] {
        assert_eq!(mode(file), 0o600, "{} must be 0600 whatever the umask", file.display());
    }
    assert_eq!(mode(&dir), 0o700);
    assert_eq!(mode(&top.path().join("data")), 0o700, "a folder the journal created is private too");
}

#[cfg(unix)]
#[test]
fn a_shared_sticky_folder_is_left_as_it_is() {
    use std::os::unix::fs::PermissionsExt;
    let top = tempfile::tempdir().unwrap();
    let shared = top.path().join("tmp");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let path = shared.join("journal.sqlite3");
    drop(Journal::open(&path).unwrap());
    assert_eq!(mode(&shared), 0o1777, "a folder like /tmp is never narrowed");
    assert_eq!(mode(&path), 0o600, "the database itself is still private");
}

#[test]
fn push_history_keeps_the_newest_rows_of_each_workspace() {
    let dir = tempfile::tempdir().unwrap();
    let j = Journal::open(&dir.path().join("j.sqlite3")).unwrap();
    assert_eq!(j.push_history(), resolve_journal::limits::DEFAULT_PUSH_HISTORY);
    j.set_push_history(3);
    for i in 0..6 {
        let mut a = big_action(&format!("pa-{i}"), 1);
        // Two pushes share each millisecond: the row order decides between them.
        a.created_at = DateTime::<Utc>::from_timestamp_millis(1_000 + i / 2).unwrap();
        j.record_push(&Push::of("/w", &a)).unwrap();
    }
    j.record_push(&Push::of("/other", &big_action("pb-1", 1))).unwrap();
    let ids: Vec<String> = j.pushes("/w", 100).unwrap().into_iter().map(|p| p.action_id).collect();
    assert_eq!(ids, vec!["pa-5", "pa-4", "pa-3"], "the 3 newest are kept, the older pruned on write");
    assert_eq!(j.pushes("/other", 100).unwrap().len(), 1, "another workspace's rows are its own");
}

/// A writer whose every write waits for a token from the test (a slow disk, on command).
fn gated_writer(journal: Arc<Journal>, queue_bytes: u64) -> (Arc<Writer>, mpsc::Sender<()>, Arc<AtomicUsize>) {
    let (open, gate) = mpsc::channel::<()>();
    let gate = Mutex::new(gate);
    let written = Arc::new(AtomicUsize::new(0));
    let w = written.clone();
    let writer = Writer::spawn_bounded(
        journal,
        Box::new(move |_, r| {
            r.expect("every write succeeds");
            w.fetch_add(1, Ordering::SeqCst);
            let _ = gate.lock().unwrap().recv();
        }),
        queue_bytes,
    )
    .unwrap();
    (Arc::new(writer), open, written)
}

#[test]
fn many_large_pushes_against_a_slow_writer_wait_for_room_and_all_arrive() {
    const SIZE: usize = 200 * 1024; // each push holds 400 KiB
    const PUSHES: usize = 20; // 8 MiB in all
    const BOUND: u64 = 1024 * 1024;
    let dir = tempfile::tempdir().unwrap();
    let journal = Arc::new(Journal::open(&dir.path().join("j.sqlite3")).unwrap());
    let (writer, open, written) = gated_writer(journal.clone(), BOUND);
    let hook = writer.persistence("/w");
    let pushed = Arc::new(AtomicUsize::new(0));
    let p = pushed.clone();
    let pusher = std::thread::spawn(move || {
        for i in 0..PUSHES {
            hook(Persist::Save(big_action(&format!("pa-{i:02}"), SIZE)));
            p.fetch_add(1, Ordering::SeqCst);
        }
    });
    // With the writer stuck on its first write, the pusher fills the queue and then waits.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !(written.load(Ordering::SeqCst) == 1 && writer.queued_bytes() + 400 * 1024 > BOUND) {
        assert!(std::time::Instant::now() < deadline, "the queue never filled");
        std::thread::yield_now();
    }
    let waiting_at = pushed.load(Ordering::SeqCst);
    assert!(waiting_at < PUSHES, "the pusher must wait for room, not queue all {PUSHES} (it queued {waiting_at})");
    assert!(writer.queued_bytes() <= BOUND, "{} bytes queued past the bound", writer.queued_bytes());
    // Let the disk go on, one write at a time.
    for _ in 0..PUSHES {
        open.send(()).unwrap();
    }
    pusher.join().unwrap();
    writer.flush();
    assert!(
        writer.peak_queued_bytes() <= BOUND,
        "at most {BOUND} bytes ever waited (peak {})",
        writer.peak_queued_bytes()
    );
    assert!(writer.peak_queued_bytes() > BOUND / 2, "the queue did fill: {}", writer.peak_queued_bytes());
    let kept: Vec<String> = journal.pending("/w").unwrap().into_iter().map(|a| a.id).collect();
    let expected: Vec<String> = (0..PUSHES).map(|i| format!("pa-{i:02}")).collect();
    assert_eq!(kept, expected, "every push arrived, in order");
    assert_eq!(journal.pushes("/w", 100).unwrap().len(), PUSHES);
    match &journal.pending("/w").unwrap()[PUSHES - 1].body {
        StoredBody::ChangeSet { changes, .. } => assert_eq!(changes[0].held_bytes(), 2 * SIZE as u64),
        StoredBody::Orphaned => panic!("the bytes must arrive whole"),
    }
}

#[test]
fn pushes_from_many_threads_under_the_store_lock_never_deadlock_with_a_full_queue() {
    const SIZE: usize = 100 * 1024;
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    let journal = Arc::new(Journal::open(&dir.path().join("j.sqlite3")).unwrap());
    // A bound smaller than two pushes: almost every push waits for the writer.
    let writer =
        Arc::new(Writer::spawn_bounded(journal.clone(), Box::new(|_, r| r.expect("written")), 300 * 1024).unwrap());
    let session =
        Arc::new(Session::with_store(&ws, ResolvePolicy::Agent, PendingActionStore::with_id_prefix("pa-")).unwrap());
    let root = session.workspace().root().display().to_string();
    session.store().set_persistence(writer.persistence(&root));
    let mut threads = Vec::new();
    for t in 0..4 {
        let s = session.clone();
        threads.push(std::thread::spawn(move || {
            for i in 0..10 {
                let name = format!("t{t}-{i}.txt");
                let before = vec![b'a'; SIZE];
                std::fs::write(s.workspace().root().join(&name), &before).unwrap();
                let mut cs = ChangeSet::new();
                cs.edit(name.clone(), before, vec![b'b'; SIZE]);
                s.api()
                    .push_pending_action(CustomToolPendingAction::from_change_set(
                        name,
                        cs,
                        s.workspace().clone(),
                        "Wrote it.",
                    ))
                    .unwrap();
                if i % 3 == 0 {
                    // A removal, queued under the store's lock too.
                    s.store().pop();
                }
                let _ = s.api().push_pending_action(CustomToolPendingAction::new("closure", |_| async {
                    Ok(ToolResult::empty())
                }));
            }
        }));
    }
    // A reader that takes the store's lock all along.
    let s = session.clone();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let st = stop.clone();
    let reader = std::thread::spawn(move || {
        let mut reads = 0u64;
        while !st.load(Ordering::SeqCst) {
            reads += s.store().list().len() as u64 + 1;
        }
        reads
    });
    for t in threads {
        t.join().unwrap();
    }
    stop.store(true, Ordering::SeqCst);
    assert!(reader.join().unwrap() > 0);
    writer.flush();
    let kept: Vec<String> = journal.pending(&root).unwrap().into_iter().map(|a| a.id).collect();
    let on_stack: Vec<String> = session.store().list().into_iter().rev().map(|a| a.id).collect();
    assert_eq!(kept, on_stack, "the journal holds exactly the stack, in order: nothing lost");
    assert_eq!(journal.pushes(&root, 1000).unwrap().len(), 80, "every push recorded");
    assert!(writer.peak_queued_bytes() <= 300 * 1024, "peak {}", writer.peak_queued_bytes());
}
