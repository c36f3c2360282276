//! Ring 3: the change notices between contexts (`src/web/tabs.rs`) in a headless Chromium
//! page. Two channels of one name in one page reach each other exactly as two tabs do (a
//! BroadcastChannel delivers to every other object of its name, in any context of the origin).
#![cfg(target_arch = "wasm32")]
// A test that panics is a failing test; clippy does not see wasm_bindgen_test fns as tests.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::cell::RefCell;
use std::rc::Rc;

use agent_world_wasm::web::clock::new_id;
use agent_world_wasm::web::tabs::ChangeChannel;
use agent_world_wasm::web::timer::sleep;
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

type Seen = Rc<RefCell<Vec<String>>>;

/// The world ids `channel`'s listener is called with, in order.
fn listen(channel: &ChangeChannel) -> Seen {
    let seen: Seen = Rc::default();
    let s = seen.clone();
    channel.subscribe(Rc::new(move |w: &str| s.borrow_mut().push(w.to_string())));
    seen
}

/// Waits up to 2 s for `seen` to be `want`.
async fn arrives(seen: &Seen, want: &[&str]) -> bool {
    for _ in 0..200 {
        if *seen.borrow() == want {
            return true;
        }
        sleep(10).await;
    }
    false
}

/// A tab alone on the database posts nothing (nobody would hear it), but what it changed
/// meanwhile is told to the first context that opens the channel after it (which may have
/// read those worlds before the change), once each; from then on both post every change.
#[wasm_bindgen_test]
async fn changes_made_before_another_context_opened_are_told_to_it() {
    let name = format!("aww-tabs-test-{}", new_id());
    let a = ChangeChannel::open(&name);
    a.post("w1", "write");
    a.post("w2", "delete");
    a.post("w1", "write");
    let b = ChangeChannel::open(&name);
    let seen_by_b = listen(&b);
    assert!(
        arrives(&seen_by_b, &["w1", "w2"]).await,
        "{:?}",
        seen_by_b.borrow()
    );
    let seen_by_a = listen(&a);
    a.post("w3", "write");
    b.post("w4", "write");
    assert!(
        arrives(&seen_by_b, &["w1", "w2", "w3"]).await,
        "{:?}",
        seen_by_b.borrow()
    );
    assert!(
        arrives(&seen_by_a, &["w4"]).await,
        "{:?}",
        seen_by_a.borrow()
    );
}
