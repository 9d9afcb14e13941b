// The restore journal's decisions (owners, identities, what is restored, left alone, kept or dropped) on a
// fake system of namespaces and processes, and its file handling on a real temporary directory.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <set>
#include <sstream>

#include "core/base/error.hpp"
#include "core/base/unique_fd.hpp"
#include "core/device/device_codec.hpp"
#include "ethtool_ctl/file_settings_journal.hpp"
#include "ethtool_ctl/journal_codec.hpp"
#include "ethtool_ctl/journal_lock.hpp"
#include "ethtool_ctl/journal_owner.hpp"
#include "ethtool_ctl/link_identity.hpp"
#include "ethtool_ctl/setting_writes.hpp"
#include "tests/support/forked_child.hpp"

namespace {

constexpr uint64_t kDev = 4;
constexpr uint64_t kInitIno = 4026531840;

// Namespaces with interfaces, and processes that are alive or not. A namespace is found by its inode
// (as the real one is found under /run/netns or /proc/PID/ns/net); `init` is the initial namespace.
struct FakeWorld {
    struct Netns {
        std::string name;
        std::map<std::string, nm::LinkState> links;  // by name
    };
    std::map<uint64_t, Netns> netns;  // by inode
    std::set<int32_t> alive;          // pids of owners that run
    std::string boot = "boot-2";
    nm::JournalOwner self{100, 5000, "boot-2", "nicmatrix test"};
    std::vector<std::pair<std::string, nm::LinkSettings>> applied;  // (netns name/ifname, what was sent)

    FakeWorld() { netns[kInitIno].name = "init"; }

    nm::LinkState& add(uint64_t ino, const std::string& ns, const std::string& name, int32_t ifindex, uint32_t mtu, bool tso,
                       std::string kind = "veth", std::string perm = "", std::string bus = "") {
        auto& n = netns[ino];
        n.name = ns;
        nm::LinkState s;
        s.name = name;
        s.mtu = mtu;
        s.features["tx-tcp-segmentation"] = {tso, tso, false};
        s.features["rx-lro"] = {false, false, true};
        s.feature_order = {"tx-tcp-segmentation", "rx-lro"};
        s.identity = {kDev, ino, ifindex, std::move(perm), std::move(kind)};
        s.driver.driver = s.identity.kind.empty() ? "e1000e" : s.identity.kind;
        s.driver.bus_info = std::move(bus);
        return n.links[name] = s;
    }
    nm::LinkState& link(uint64_t ino, const std::string& name) { return netns.at(ino).links.at(name); }
    void rename(uint64_t ino, const std::string& from, const std::string& to) {
        auto s = netns.at(ino).links.at(from);
        netns.at(ino).links.erase(from);
        s.name = to;
        netns.at(ino).links[to] = s;
    }
};

class FakeControl final : public nm::DeviceControl {
public:
    FakeControl(FakeWorld& w, uint64_t ino) : w_(w), ino_(ino) {}
    nm::LinkState read(std::string_view ifname) override {
        auto& links = w_.netns.at(ino_).links;
        const auto it = links.find(std::string(ifname));
        if (it == links.end()) throw nm::usage_error("no such interface: " + std::string(ifname));
        nm::LinkState s = it->second;
        s.netns = w_.netns.at(ino_).name;
        return s;
    }
    std::vector<std::string> link_names() override {
        std::vector<std::string> out;
        for (const auto& [name, s] : w_.netns.at(ino_).links) out.push_back(name);
        return out;
    }
    void validate(std::string_view, const nm::LinkSettings&) override {}
    nm::ApplyReport apply(std::string_view ifname, const nm::LinkSettings& wanted) override {
        auto& s = w_.netns.at(ino_).links.at(std::string(ifname));
        w_.applied.emplace_back(w_.netns.at(ino_).name + "/" + std::string(ifname), wanted);
        for (const auto& [name, on] : wanted.features) {
            if (!s.features.at(name).fixed) s.features.at(name) = {on, on, false};
        }
        if (wanted.mtu && !stuck_mtu) s.mtu = *wanted.mtu;
        nm::ApplyReport r;
        r.ifname = std::string(ifname);
        r.mtu_after = s.mtu;
        return r;
    }
    bool stuck_mtu = false;

private:
    FakeWorld& w_;
    uint64_t ino_;
};

class FakeSystem final : public nm::JournalSystem {
public:
    explicit FakeSystem(FakeWorld& w) : w_(w) {}
    nm::JournalOwner self() override { return w_.self; }
    nm::OwnerStatus status(const nm::JournalOwner& o) override {
        if (o.pid <= 0) return nm::OwnerStatus::Gone;
        if (o.boot_id != w_.boot) return nm::OwnerStatus::EarlierBoot;
        return w_.alive.count(o.pid) ? nm::OwnerStatus::Alive : nm::OwnerStatus::Gone;
    }
    std::optional<std::string> find_netns(uint64_t dev, uint64_t ino) override {
        if (dev != kDev || !w_.netns.count(ino)) return std::nullopt;
        return w_.netns.at(ino).name;
    }
    std::string initial_netns() override { return "init"; }
    std::string describe_netns(uint64_t, uint64_t ino) override { return w_.netns.count(ino) ? w_.netns.at(ino).name : "?"; }
    std::unique_ptr<nm::DeviceControl> control(const std::string& where) override {
        for (const auto& [ino, n] : w_.netns) {
            if (n.name == where) {
                auto c = std::make_unique<FakeControl>(w_, ino);
                c->stuck_mtu = stuck_mtu;
                return c;
            }
        }
        throw nm::usage_error("netns " + where + " does not exist");
    }
    bool stuck_mtu = false;

private:
    FakeWorld& w_;
};

struct TempDir {
    std::string path;
    TempDir() {
        char tmpl[] = "/tmp/nmjournalXXXXXX";
        path = ::mkdtemp(tmpl);
    }
    ~TempDir() { std::system(("rm -rf " + path).c_str()); }
};

bool exists(const std::string& path) {
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0;
}

nm::FileSettingsJournal journal_in(const TempDir& dir, FakeWorld& w) {
    return nm::FileSettingsJournal(dir.path + "/sub/journal.json", std::make_shared<FakeSystem>(w));
}

/// The fake world with one veth, nm-a (ifindex 7, MTU 1500, TSO on), in namespace lab-a, and a scratch
/// directory for the journal.
struct NmA {
    TempDir dir;
    FakeWorld w;
    NmA() { w.add(11, "lab-a", "nm-a", 7, 1500, true); }
    /// A journal of this process in `dir` that has remembered nm-a as it is now.
    nm::FileSettingsJournal claimed() {
        auto j = journal_in(dir, w);
        j.remember(w.link(11, "nm-a"));
        return j;
    }
};

// A change nicmatrix makes: `change` applied to the interface, journalled as written.
template <typename F>
void wrote(nm::SettingsJournal& j, FakeWorld& w, uint64_t ino, const std::string& name, F change) {
    const nm::LinkState before = w.link(ino, name);
    change(w.link(ino, name));
    j.record(before, nm::finished_writes({}, before, w.link(ino, name)));
}

// What a process of another pid does: same file, another owner.
void as_other_process(FakeWorld& w, int32_t pid) { w.self = {pid, 7000 + static_cast<uint64_t>(pid), w.boot, "nicmatrix other"}; }

nm::JournalReport only(const std::vector<nm::JournalReport>& r) {
    REQUIRE(r.size() == 1);
    return r[0];
}

}  // namespace

TEST_CASE_METHOD(NmA, "The journal keeps the first state with its owner and identity, a restore after the owner died puts it back", "[unit]") {
    auto journal = claimed();
    wrote(journal, w, 11, "nm-a", [](nm::LinkState& s) {  // the change
        s.mtu = 9000;
        s.features["tx-tcp-segmentation"] = {false, false, false};
    });
    journal.remember(w.link(11, "nm-a"));  // a later state does not replace the original
    CHECK(journal.entries()[0].writes.at("mtu") == nm::SettingWrite{"1500", "9000", std::nullopt});
    REQUIRE(journal.entries().size() == 1);
    const auto e = journal.entries()[0];
    CHECK(e.original.mtu == 1500);
    CHECK(e.owner == w.self);
    CHECK(e.where == "lab-a");
    CHECK(e.original.identity.ifindex == 7);

    // The owner is SIGKILLed; another process (a fresh object on the same file) restores.
    const auto owner = w.self;
    as_other_process(w, 200);
    auto after_crash = journal_in(dir, w);
    const auto r = only(after_crash.restore(nm::RestoreOptions{}));
    CHECK(r.action == nm::JournalAction::Restored);
    CHECK(r.note.empty());
    CHECK(r.owner == owner);
    CHECK(w.link(11, "nm-a").mtu == 1500);
    CHECK(w.link(11, "nm-a").features.at("tx-tcp-segmentation").active);
    // Only changeable features whose wanted state moved are sent; fixed ones never.
    REQUIRE(w.applied.size() == 1);
    CHECK(w.applied[0].second.features == std::map<std::string, bool>{{"tx-tcp-segmentation", true}});
    CHECK(after_crash.entries().empty());
    CHECK_FALSE(exists(journal.path()));
    // Twice is harmless.
    CHECK(after_crash.restore(nm::RestoreOptions{}).empty());
    CHECK(w.applied.size() == 1);
}

TEST_CASE_METHOD(NmA, "A live owner's entries are left alone by restore, refused to a second claimer, and taken only with force", "[unit]") {
    auto sweep = claimed();
    w.alive.insert(w.self.pid);
    wrote(sweep, w, 11, "nm-a", [](nm::LinkState& s) { s.mtu = 9000; });  // a cell of the running sweep

    as_other_process(w, 300);
    auto other = journal_in(dir, w);
    const auto r = only(other.restore(nm::RestoreOptions{}));
    CHECK(r.action == nm::JournalAction::LeftAlone);
    CHECK(r.owner.pid == 100);
    CHECK_THAT(r.note, Catch::Contains("pid 100") && Catch::Contains("still running") && Catch::Contains("--force"));
    CHECK(w.link(11, "nm-a").mtu == 9000);  // untouched
    CHECK(w.applied.empty());
    CHECK(other.entries().size() == 1);

    // A second sweep or `set` on the same interface is refused before it changes anything.
    try {
        other.remember(w.link(11, "nm-a"));
        FAIL("remember() did not refuse");
    } catch (const nm::Error& e) {
        CHECK(e.kind() == nm::ErrorKind::Refused);
        CHECK_THAT(e.what(), Catch::Contains("nm-a (netns lab-a) is held by pid 100 (nicmatrix test)"));
    }
    REQUIRE(other.entries().size() == 1);
    CHECK(other.entries()[0].owner.pid == 100);
    CHECK(other.entries()[0].original.mtu == 1500);

    // The person who knows better.
    const auto forced = only(other.restore(nm::RestoreOptions{true, false}));
    CHECK(forced.action == nm::JournalAction::Restored);
    CHECK(w.link(11, "nm-a").mtu == 1500);
    CHECK(other.entries().empty());
}

TEST_CASE_METHOD(NmA, "An owner that is gone: its entry is restored by others, and taken over with its original by a new claimer", "[unit]") {
    auto crashed = claimed();
    w.link(11, "nm-a").mtu = 9000;  // left changed by a sweep that was killed

    as_other_process(w, 400);
    auto set = journal_in(dir, w);
    set.remember(w.link(11, "nm-a"));  // `nicmatrix set` now: not refused (the owner is gone) ...
    REQUIRE(set.entries().size() == 1);
    CHECK(set.entries()[0].owner.pid == 400);
    CHECK(set.entries()[0].original.mtu == 1500);  // ... and the truer original stays
}

TEST_CASE_METHOD(NmA, "An entry from an earlier boot is dropped with a note, never applied over the new boot's state", "[unit]") {
    auto before = claimed();
    w.boot = "boot-3";  // a reboot
    as_other_process(w, 100);
    auto after = journal_in(dir, w);
    const auto r = only(after.restore(nm::RestoreOptions{}));
    CHECK(r.action == nm::JournalAction::Dropped);
    CHECK_THAT(r.note, Catch::Contains("before the last reboot"));
    CHECK(w.applied.empty());
    CHECK(after.entries().empty());

    // A claim replaces such an entry with the state now.
    before.remember(w.link(11, "nm-a"));
    w.boot = "boot-4";
    as_other_process(w, 500);
    w.link(11, "nm-a").mtu = 2000;
    after.remember(w.link(11, "nm-a"));
    REQUIRE(after.entries().size() == 1);
    CHECK(after.entries()[0].original.mtu == 2000);
    CHECK(after.entries()[0].owner.pid == 500);
}

TEST_CASE_METHOD(NmA, "A renamed interface is found by its ifindex and restored, the note says its new name", "[unit]") {
    auto j = claimed();
    wrote(j, w, 11, "nm-a", [](nm::LinkState& s) { s.mtu = 9000; });
    w.rename(11, "nm-a", "nm-x");
    as_other_process(w, 200);
    const auto r = only(j.restore(nm::RestoreOptions{}));
    CHECK(r.action == nm::JournalAction::Restored);
    CHECK(r.ifname == "nm-a");
    CHECK_THAT(r.note, Catch::Contains("now named nm-x"));
    CHECK(w.link(11, "nm-x").mtu == 1500);
    CHECK(j.entries().empty());
}

TEST_CASE_METHOD(NmA, "Another interface under the journalled name is never touched: the entry stays, --forget drops it", "[unit]") {
    auto j = claimed();
    // nm-a deleted and another made under its name: same name, another ifindex.
    w.netns.at(11).links.erase("nm-a");
    w.add(11, "lab-a", "nm-a", 9, 4000, false);
    as_other_process(w, 200);
    const auto r = only(j.restore(nm::RestoreOptions{}));
    CHECK(r.action == nm::JournalAction::Kept);
    CHECK_THAT(r.note, Catch::Contains("ifindex 7") && Catch::Contains("--forget"));
    CHECK(w.applied.empty());
    CHECK(w.link(11, "nm-a").mtu == 4000);
    CHECK(j.entries().size() == 1);
    const auto f = only(j.restore(nm::RestoreOptions{false, true}));
    CHECK(f.action == nm::JournalAction::Forgotten);
    CHECK(w.applied.empty());
    CHECK(j.entries().empty());
}

TEST_CASE_METHOD(NmA, "Same-named interfaces in two namespaces: the restore acts in the journalled one, wherever it runs", "[unit]") {
    w.add(12, "other", "nm-a", 7, 1400, true);  // same name, same ifindex, another namespace
    auto j = claimed();
    wrote(j, w, 11, "nm-a", [](nm::LinkState& s) { s.mtu = 9000; });
    as_other_process(w, 200);
    const auto r = only(j.restore(nm::RestoreOptions{}));
    CHECK(r.action == nm::JournalAction::Restored);
    CHECK(w.link(11, "nm-a").mtu == 1500);
    CHECK(w.link(12, "nm-a").mtu == 1400);
    REQUIRE(w.applied.size() == 1);
    CHECK(w.applied[0].first == "lab-a/nm-a");
}

TEST_CASE_METHOD(NmA, "A namespace that is gone: its veth went with it (dropped), a physical NIC is found back in init by its address", "[unit]") {
    w.add(13, "nic", "eth1", 3, 1500, true, "", "00:1b:21:aa:bb:cc", "0000:03:00.0");
    w.add(14, "nic2", "eth2", 4, 1500, true, "", "00:1b:21:aa:bb:dd", "0000:04:00.0");
    auto j = claimed();
    j.remember(w.link(13, "eth1"));
    j.remember(w.link(14, "eth2"));
    REQUIRE(j.entries().size() == 3);
    wrote(j, w, 13, "eth1", [](nm::LinkState& s) { s.mtu = 9000; });
    // The namespaces are deleted: the veth is destroyed, the NIC comes back to init under another name
    // and index; the second NIC went elsewhere.
    auto nic = w.link(13, "eth1");
    w.netns.erase(11);
    w.netns.erase(13);
    w.netns.erase(14);
    nic.name = "dev5";
    nic.identity.netns_ino = kInitIno;
    nic.identity.ifindex = 21;
    w.netns.at(kInitIno).links["dev5"] = nic;
    w.add(kInitIno, "init", "lo", 1, 65536, false, "");

    as_other_process(w, 200);
    const auto reports = j.restore(nm::RestoreOptions{});
    REQUIRE(reports.size() == 3);
    CHECK(reports[0].action == nm::JournalAction::Dropped);
    CHECK_THAT(reports[0].note, Catch::Contains("veth interface nm-a went with it"));
    CHECK(reports[1].action == nm::JournalAction::Restored);
    CHECK_THAT(reports[1].note, Catch::Contains("came back to the initial namespace as dev5"));
    CHECK(w.link(kInitIno, "dev5").mtu == 1500);
    CHECK(reports[2].action == nm::JournalAction::Kept);
    CHECK_THAT(reports[2].note, Catch::Contains("00:1b:21:aa:bb:dd"));
    REQUIRE(j.entries().size() == 1);
    CHECK(j.entries()[0].original.name == "eth2");
}

TEST_CASE_METHOD(NmA, "A restore that does not hold keeps the entry with the differences", "[unit]") {
    auto system = std::make_shared<FakeSystem>(w);
    nm::FileSettingsJournal j(dir.path + "/j.json", system);
    j.remember(w.link(11, "nm-a"));
    wrote(j, w, 11, "nm-a", [](nm::LinkState& s) { s.mtu = 9000; });
    system->stuck_mtu = true;
    as_other_process(w, 200);
    const auto r = only(j.restore(nm::RestoreOptions{}));
    CHECK(r.action == nm::JournalAction::Kept);
    CHECK_THAT(r.note, Catch::Contains("mtu=9000 (was 1500)") && Catch::Contains("entry kept"));
    CHECK(j.entries().size() == 1);
}

TEST_CASE_METHOD(NmA, "release drops only this process's entry for that interface", "[unit]") {
    w.add(11, "lab-a", "nm-b", 8, 1500, true);
    auto mine = claimed();
    const auto me = w.self;
    as_other_process(w, 300);
    auto theirs = journal_in(dir, w);
    theirs.remember(w.link(11, "nm-b"));
    theirs.release(w.link(11, "nm-a"));  // not theirs
    CHECK(theirs.entries().size() == 2);
    w.self = me;
    mine.release(w.link(11, "nm-a"));
    REQUIRE(mine.entries().size() == 1);
    CHECK(mine.entries()[0].original.name == "nm-b");
}

TEST_CASE("A journal of the first format (no identity) is read as entries without owner, reported and never matched by name", "[unit]") {
    TempDir dir;
    FakeWorld w;
    auto& s = w.add(11, "lab-a", "nm-a", 7, 1500, true);
    nm::LinkState old = s;
    old.identity = {};
    old.netns = "lab-a";
    const std::string path = dir.path + "/j.json";
    std::ofstream(path) << nm::Json{{"schema", "nicmatrix/journal/v1"}, {"entries", {old}}}.dump();
    w.link(11, "nm-a").mtu = 9000;
    nm::FileSettingsJournal j(path, std::make_shared<FakeSystem>(w));
    REQUIRE(j.entries().size() == 1);
    CHECK(j.entries()[0].owner.pid == 0);
    const auto r = only(j.restore(nm::RestoreOptions{}));
    CHECK(r.action == nm::JournalAction::Kept);
    CHECK_THAT(r.note, Catch::Contains("not matched by name") && Catch::Contains("--forget"));
    CHECK(w.applied.empty());
    CHECK(w.link(11, "nm-a").mtu == 9000);
}

TEST_CASE("A corrupt journal is an error that names the file, not an empty journal", "[unit]") {
    TempDir dir;
    FakeWorld w;
    const std::string path = dir.path + "/j.json";
    std::ofstream(path) << "{not json";
    nm::FileSettingsJournal journal(path, std::make_shared<FakeSystem>(w));
    CHECK_THROWS_WITH(journal.entries(), Catch::Contains(path));
    CHECK_THROWS_AS(journal.remember(w.add(11, "lab-a", "nm-a", 7, 1500, true)), nm::Error);
    CHECK_THROWS_AS(journal.restore(nm::RestoreOptions{}), nm::Error);
}

TEST_CASE("A name that is not UTF-8 is journalled (as U+FFFD) and still restored by its identity", "[unit]") {
    TempDir dir;
    FakeWorld w;
    const std::string odd = std::string("nm") + '\xff';
    w.add(11, "lab-a", odd, 7, 1500, true);
    auto j = journal_in(dir, w);
    REQUIRE_NOTHROW(j.remember(w.link(11, odd)));
    CHECK(j.entries().at(0).original.name == "nm\xEF\xBF\xBD");
    wrote(j, w, 11, odd, [](nm::LinkState& s) { s.mtu = 9000; });
    as_other_process(w, 200);
    const auto r = only(j.restore(nm::RestoreOptions{}));
    CHECK(r.action == nm::JournalAction::Restored);
    CHECK(w.link(11, odd).mtu == 1500);
}

TEST_CASE_METHOD(NmA, "A lock held too long is an error naming the holder, a planted symbolic link is refused, not followed", "[unit]") {
    const std::string path = dir.path + "/j.json";
    nm::FileSettingsJournal j(path, std::make_shared<FakeSystem>(w));
    j.set_lock_wait(std::chrono::milliseconds(100));
    {
        nm::UniqueFd held(::open((path + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
        REQUIRE(held);
        REQUIRE(::flock(held.get(), LOCK_EX) == 0);  // another open file description: the journal's flock conflicts
        try {
            j.remember(w.link(11, "nm-a"));
            FAIL("remember() did not time out");
        } catch (const nm::Error& e) {
            CHECK(e.kind() == nm::ErrorKind::Failed);
            CHECK_THAT(e.what(), Catch::Contains("held by pid " + std::to_string(::getpid())) && Catch::Contains("0.1 s"));
        }
    }
    REQUIRE_NOTHROW(j.remember(w.link(11, "nm-a")));

    // Symbolic links planted where the journal puts its lock or reads its file.
    TempDir other;
    const std::string victim = other.path + "/victim";
    std::ofstream(victim) << "precious";
    const std::string p2 = other.path + "/j.json";
    REQUIRE(::symlink(victim.c_str(), (p2 + ".lock").c_str()) == 0);
    nm::FileSettingsJournal j2(p2, std::make_shared<FakeSystem>(w));
    CHECK_THROWS_WITH(j2.remember(w.link(11, "nm-a")), Catch::Contains("symbolic link"));
    REQUIRE(::symlink(victim.c_str(), (other.path + "/j3.json").c_str()) == 0);
    nm::FileSettingsJournal j3(other.path + "/j3.json", std::make_shared<FakeSystem>(w));
    CHECK_THROWS_WITH(j3.entries(), Catch::Contains("symbolic link"));
    std::ifstream in(victim);
    std::string text;
    in >> text;
    CHECK(text == "precious");
}

TEST_CASE("The journal paths: NICMATRIX_JOURNAL or /run/nicmatrix/journal.json, the agent's under /run", "[unit]") {
    ::setenv("NICMATRIX_JOURNAL", "/tmp/x/j.json", 1);
    CHECK(nm::FileSettingsJournal::default_path() == "/tmp/x/j.json");
    ::unsetenv("NICMATRIX_JOURNAL");
    CHECK(nm::FileSettingsJournal::default_path() == "/run/nicmatrix/journal.json");
    CHECK(nm::FileSettingsJournal::default_agent_path() == "/run/nicmatrix/agent-journal.json");
    const auto defaults = nm::FileSettingsJournal::default_paths();
    REQUIRE(defaults.size() >= 2);
    CHECK(defaults[0] == "/run/nicmatrix/journal.json");
    CHECK(defaults[1] == "/run/nicmatrix/agent-journal.json");

    // The packaged agent unit journals one file per interface: restore finds them all.
    TempDir dir;
    for (const char* f : {"agent-eth1.json", "agent-eth0.json", "agent-eth0.json.lock", "journal.json", "agent-eth0.json.tmp.ab12cd"}) {
        std::ofstream(dir.path + "/" + f) << "{}";
    }
    CHECK(nm::FileSettingsJournal::agent_journals_in(dir.path) ==
          std::vector<std::string>{dir.path + "/agent-eth0.json", dir.path + "/agent-eth1.json"});
}

TEST_CASE("/proc/PID/stat and /proc/locks parse, an owner is alive only with the same pid, start time and boot", "[unit]") {
    const auto st = nm::parse_proc_pid_stat("4242 (a) b (c)) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 12345 678");
    REQUIRE(st);
    CHECK(st->state == 'S');
    CHECK(st->start_time == 987654u);
    CHECK_FALSE(nm::parse_proc_pid_stat("4242 (a) S 1 2"));
    CHECK_FALSE(nm::parse_proc_pid_stat("garbage"));

    const nm::JournalOwner o{4242, 987654, "boot-1", ""};
    CHECK(nm::owner_status(o, "boot-1", nm::ProcPidStat{'S', 987654}) == nm::OwnerStatus::Alive);
    CHECK(nm::owner_status(o, "boot-1", nm::ProcPidStat{'S', 987655}) == nm::OwnerStatus::Gone);  // pid reused
    CHECK(nm::owner_status(o, "boot-1", nm::ProcPidStat{'Z', 987654}) == nm::OwnerStatus::Gone);  // exited
    CHECK(nm::owner_status(o, "boot-1", std::nullopt) == nm::OwnerStatus::Gone);
    CHECK(nm::owner_status(o, "boot-2", nm::ProcPidStat{'S', 987654}) == nm::OwnerStatus::EarlierBoot);
    CHECK(nm::owner_status(nm::JournalOwner{}, "boot-1", std::nullopt) == nm::OwnerStatus::Gone);

    const std::string locks =
        "1: FLOCK  ADVISORY  WRITE 1234 00:1a:5521 0 EOF\n"
        "1: -> FLOCK  ADVISORY  WRITE 999 00:1a:5521 0 EOF\n"
        "2: POSIX  ADVISORY  WRITE 77 08:01:42 0 EOF\n";
    CHECK(nm::lock_holders(locks, 0, 0x1a, 5521) == std::vector<int>{1234});
    CHECK(nm::lock_holders(locks, 8, 1, 42) == std::vector<int>{77});
    CHECK(nm::lock_holders(locks, 8, 1, 43).empty());
}

TEST_CASE("Owners against the real /proc: this process is alive, an exited child is gone", "[unit]") {
    const auto self = nm::this_process();
    CHECK(self.pid == ::getpid());
    CHECK(self.boot_id.size() == 36);
    CHECK_THAT(self.command, Catch::Contains("nm_unit_tests"));
    CHECK(nm::owner_status(self) == nm::OwnerStatus::Alive);
    auto reused = self;
    reused.start_time += 1;
    CHECK(nm::owner_status(reused) == nm::OwnerStatus::Gone);

    auto child = nm::test::fork_child([](int report) {
        const auto me = nm::this_process();
        (void)!::write(report, &me.start_time, sizeof me.start_time);
    });
    uint64_t start = 0;
    REQUIRE(child.read_report(&start, sizeof start));
    const nm::JournalOwner kid{child.pid(), start, self.boot_id, ""};
    // Not reaped yet: a zombie, which restores nothing any more.
    siginfo_t info{};
    REQUIRE(::waitid(P_PID, static_cast<id_t>(child.pid()), &info, WEXITED | WNOWAIT) == 0);
    CHECK(nm::owner_status(kid) == nm::OwnerStatus::Gone);
    child.reap();
    CHECK(nm::owner_status(kid) == nm::OwnerStatus::Gone);
}

TEST_CASE("Identity rules: same interface needs namespace, ifindex, kind and any hardware address", "[unit]") {
    nm::LinkState a;
    a.name = "eth1";
    a.identity = {kDev, 11, 3, "00:1b:21:aa:bb:cc", ""};
    a.driver.driver = "e1000e";
    nm::LinkState b = a;
    b.name = "lan0";
    CHECK(nm::same_interface(a, b));  // renamed
    b.identity.ifindex = 4;
    CHECK_FALSE(nm::same_interface(a, b));
    CHECK(nm::same_hardware(a, b));  // moved: another index, same address
    b = a;
    b.identity.netns_ino = 12;
    CHECK_FALSE(nm::same_interface(a, b));
    CHECK(nm::same_link(a, a));
    CHECK_FALSE(nm::same_link(a, b));
    b = a;
    b.identity.perm_address = "00:1b:21:aa:bb:dd";
    CHECK_FALSE(nm::same_interface(a, b));
    CHECK_FALSE(nm::same_hardware(a, b));
    nm::LinkState veth;
    veth.identity = {kDev, 11, 5, "", "veth"};
    CHECK_FALSE(nm::has_hardware_identity(veth));
    CHECK(nm::has_hardware_identity(a));
    CHECK_FALSE(nm::same_hardware(veth, veth));
    nm::LinkState unknown;
    unknown.name = "x";
    CHECK_FALSE(nm::same_interface(unknown, unknown));
    CHECK(nm::same_link(unknown, unknown));  // no identity: by names
}

TEST_CASE_METHOD(NmA, "A setting someone else changed after nicmatrix wrote it is reported and left, the rest put back", "[unit]") {
    auto j = claimed();
    wrote(j, w, 11, "nm-a", [](nm::LinkState& s) {
        s.mtu = 9000;
        s.features["tx-tcp-segmentation"] = {false, false, false};
    });
    w.link(11, "nm-a").mtu = 4000;  // an administrator, meanwhile
    as_other_process(w, 200);
    const auto r = only(j.restore(nm::RestoreOptions{}));
    CHECK(r.action == nm::JournalAction::Restored);
    CHECK_THAT(r.note, Catch::Contains("mtu is 4000 (nicmatrix wrote 9000; it was 1500 before)"));
    CHECK(w.link(11, "nm-a").mtu == 4000);
    CHECK(w.link(11, "nm-a").features.at("tx-tcp-segmentation").wanted);
    REQUIRE(w.applied.size() == 1);
    CHECK_FALSE(w.applied[0].second.mtu);
    CHECK(j.entries().empty());
}

TEST_CASE_METHOD(NmA, "A setting nicmatrix never wrote is never put back, whatever moved since the claim", "[unit]") {
    auto j = claimed();
    wrote(j, w, 11, "nm-a", [](nm::LinkState& s) { s.features["tx-tcp-segmentation"] = {false, false, false}; });
    w.link(11, "nm-a").mtu = 4000;  // not nicmatrix's
    as_other_process(w, 200);
    const auto r = only(j.restore(nm::RestoreOptions{}));
    CHECK(r.action == nm::JournalAction::Restored);
    CHECK(w.link(11, "nm-a").mtu == 4000);
    CHECK(w.link(11, "nm-a").features.at("tx-tcp-segmentation").wanted);
}

TEST_CASE_METHOD(NmA, "A journal writable by others, owned by another user or naming a path is refused, never acted on", "[unit]") {
    const std::string path = dir.path + "/j.json";
    nm::FileSettingsJournal j(path, std::make_shared<FakeSystem>(w));
    j.remember(w.link(11, "nm-a"));
    REQUIRE(::chmod(path.c_str(), 0666) == 0);
    CHECK_THROWS_WITH(j.entries(), Catch::Contains("writable by group or others (mode 0666)"));
    CHECK_THROWS_AS(j.restore(nm::RestoreOptions{}), nm::Error);
    REQUIRE(::chmod(path.c_str(), 0600) == 0);
    REQUIRE(::chown(path.c_str(), 65534, 65534) == 0);
    CHECK_THROWS_WITH(j.entries(), Catch::Contains("owned by uid 65534"));
    REQUIRE(::chown(path.c_str(), 0, 0) == 0);
    CHECK(j.entries().size() == 1);
    // A hand-made entry whose setting name would form a path.
    nm::Json file = nm::Json::parse(std::ifstream(path));
    file["entries"][0]["writes"] = {{"napi.../../../../tmp/x", {{"before", "0"}, {"written", "7"}}}};
    std::ofstream(path) << file.dump();
    CHECK_THROWS_WITH(j.entries(), Catch::Contains(path) && Catch::Contains("is not one of gro_flush_timeout, napi_defer_hard_irqs"));
    CHECK(w.applied.empty());
}

TEST_CASE_METHOD(NmA, "A rolled-back change among several is journalled too, so the final restore still puts back the first value", "[unit]") {
    auto j = journal_in(dir, w);
    FakeControl device(w, 11);
    j.remember(device.read("nm-a"));
    nm::LinkSettings first, second;
    first.mtu = 4000;
    second.mtu = 6000;
    nm::apply_recorded(device, j, "nm-a", first);                     // confirmed
    const auto last = nm::apply_recorded(device, j, "nm-a", second);  // rolled back
    CHECK(last.writes.at("mtu") == nm::SettingWrite{"4000", "6000", std::nullopt});
    const auto undo = nm::undo_writes(device, "nm-a", last.writes, &j);
    CHECK(undo.foreign.empty());
    CHECK(w.link(11, "nm-a").mtu == 4000);
    CHECK(j.entries().at(0).writes.at("mtu") == nm::SettingWrite{"1500", "4000", std::nullopt});
    as_other_process(w, 200);
    const auto r = only(j.restore(nm::RestoreOptions{}));
    CHECK(r.action == nm::JournalAction::Restored);
    CHECK(r.note.empty());
    CHECK(w.link(11, "nm-a").mtu == 1500);
}

TEST_CASE("A v2 journal's entry is restored as v2 did (every setting that differs), and stays v2-like when kept", "[unit]") {
    TempDir dir;
    FakeWorld w;
    const auto& s = w.add(11, "lab-a", "nm-a", 7, 1500, true);
    nm::JournalEntry e;
    e.original = s;
    e.where = "lab-a";
    const std::string path = dir.path + "/j.json";
    std::ofstream(path)
        << nm::Json{{"schema", "nicmatrix/journal/v2"}, {"entries", {{{"owner", e.owner}, {"where", "lab-a"}, {"original", s}}}}}.dump();
    ::chmod(path.c_str(), 0600);
    w.link(11, "nm-a").mtu = 9000;
    auto system = std::make_shared<FakeSystem>(w);
    nm::FileSettingsJournal j(path, system);
    system->stuck_mtu = true;
    const auto kept = only(j.restore(nm::RestoreOptions{}));
    CHECK(kept.action == nm::JournalAction::Kept);
    REQUIRE(j.entries().size() == 1);
    CHECK(j.entries()[0].legacy);  // rewritten as v3, still without writes: still restored the v2 way
    system->stuck_mtu = false;
    const auto r = only(j.restore(nm::RestoreOptions{}));
    CHECK(r.action == nm::JournalAction::Restored);
    CHECK_THAT(r.note, Catch::Contains("older journal (v2)"));
    CHECK(w.link(11, "nm-a").mtu == 1500);
}
