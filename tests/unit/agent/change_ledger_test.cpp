// The agent's session state machine on a fake clock: change ids, confirm refusal after a rollback, the
// stack of unconfirmed changes, and when silence ends a session.
#include <catch2/catch.hpp>

#include "agent/change_ledger.hpp"
#include "tests/support/matrix_fakes.hpp"

using namespace std::chrono_literals;
using Confirmation = nm::ChangeLedger::Confirmation;

namespace {

nm::ChangeLedger::Change change(uint64_t id, uint32_t mtu_before, nm::Clock::time_point deadline) {
    nm::LinkState before;
    before.name = "nm-b";
    before.mtu = mtu_before;
    return {id, "nm-b", before, deadline, {}};
}

}  // namespace

TEST_CASE("ChangeLedger: a confirm inside the window keeps the change, one after the rollback is refused", "[unit]") {
    nm::test::FakeClock clock;
    nm::ChangeLedger ledger(10s, clock.now());
    ledger.record(change(1, 1500, clock.now() + 3s));
    CHECK(ledger.confirm(1) == Confirmation::Confirmed);
    CHECK(ledger.confirm(1) == Confirmation::AlreadyConfirmed);
    CHECK(ledger.pending().empty());

    ledger.record(change(2, 4000, clock.now() + 3s));
    clock.advance(2999ms);
    CHECK_FALSE(ledger.rollback_due(clock.now()));
    clock.advance(1ms);
    REQUIRE(ledger.rollback_due(clock.now()));
    const auto undo = ledger.take_for_rollback();
    REQUIRE(undo.size() == 1);
    CHECK(undo.front().id == 2);
    CHECK(undo.front().before.mtu == 4000);
    CHECK(ledger.confirm(2) == Confirmation::RolledBack);  // the late confirm
    CHECK(ledger.confirm(3) == Confirmation::Unknown);
    CHECK_FALSE(ledger.rollback_due(clock.now()));
}

TEST_CASE("ChangeLedger: stacked changes roll back newest first, to the last confirmed state", "[unit]") {
    nm::test::FakeClock clock;
    nm::ChangeLedger ledger(10s, clock.now());
    ledger.record(change(1, 1500, clock.now() + 60s));  // 1500 -> 4000
    REQUIRE(ledger.confirm(1) == Confirmation::Confirmed);
    ledger.record(change(2, 4000, clock.now() + 1s));   // 4000 -> 5000, short window
    ledger.record(change(3, 5000, clock.now() + 60s));  // 5000 -> 6000, long window
    clock.advance(1s);
    // The short window closing takes the newer change with it: the peer never stays at an unconfirmed state.
    REQUIRE(ledger.rollback_due(clock.now()));
    const auto undo = ledger.take_for_rollback();
    REQUIRE(undo.size() == 2);
    CHECK(undo[0].id == 3);
    CHECK(undo[1].id == 2);
    CHECK(undo[1].before.mtu == 4000);  // the last confirmed state
    CHECK(ledger.confirm(3) == Confirmation::RolledBack);
    CHECK(ledger.confirm(2) == Confirmation::RolledBack);
    CHECK(ledger.confirm(1) == Confirmation::AlreadyConfirmed);
}

TEST_CASE("ChangeLedger: confirming the newest change keeps the older ones it was applied on", "[unit]") {
    nm::test::FakeClock clock;
    nm::ChangeLedger ledger(10s, clock.now());
    ledger.record(change(4, 1500, clock.now() + 3s));
    ledger.record(change(5, 1500, clock.now() + 3s));
    CHECK(ledger.confirm(5) == Confirmation::Confirmed);
    CHECK(ledger.pending().empty());
    CHECK(ledger.confirm(4) == Confirmation::AlreadyConfirmed);
    // Confirming an older one leaves the newer pending.
    ledger.record(change(6, 1500, clock.now() + 3s));
    ledger.record(change(7, 1500, clock.now() + 3s));
    CHECK(ledger.confirm(6) == Confirmation::Confirmed);
    REQUIRE(ledger.pending().size() == 1);
    CHECK(ledger.pending().front().id == 7);
    // A change that failed half-way and was put back at once counts as rolled back.
    ledger.drop(7);
    CHECK(ledger.pending().empty());
    CHECK(ledger.confirm(7) == Confirmation::RolledBack);
}

TEST_CASE("ChangeLedger: silence counts from the last handled message and never cuts a change's window short", "[unit]") {
    nm::test::FakeClock clock;
    nm::ChangeLedger ledger(1s, clock.now());
    clock.advance(900ms);
    CHECK_FALSE(ledger.silent(clock.now()));
    ledger.heard(clock.now());  // e.g. after a slow apply finished
    clock.advance(900ms);
    CHECK_FALSE(ledger.silent(clock.now()));
    CHECK(ledger.next_due() == clock.now() + 100ms);
    clock.advance(100ms);
    CHECK(ledger.silent(clock.now()));

    // A change with a 3 s window, then nothing: the heartbeat timeout (1 s) passes inside the window, but
    // the session waits for the window, rolls the change back, and only then counts as silent.
    ledger.heard(clock.now());
    ledger.record(change(1, 1500, clock.now() + 3s));
    CHECK(ledger.next_due() == clock.now() + 3s);
    clock.advance(1500ms);
    CHECK_FALSE(ledger.silent(clock.now()));
    CHECK_FALSE(ledger.rollback_due(clock.now()));
    clock.advance(1500ms);
    CHECK(ledger.rollback_due(clock.now()));
    ledger.take_for_rollback();
    CHECK(ledger.silent(clock.now()));

    // Heard before the window ends: the window still decides the rollback, silence comes later.
    ledger.heard(clock.now());
    ledger.record(change(2, 1500, clock.now() + 500ms));
    CHECK(ledger.next_due() == clock.now() + 500ms);
    clock.advance(500ms);
    CHECK(ledger.rollback_due(clock.now()));
    ledger.take_for_rollback();
    CHECK_FALSE(ledger.silent(clock.now()));
    CHECK(ledger.next_due() == clock.now() + 500ms);
}
