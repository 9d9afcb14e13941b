#include "agent/agent_server.hpp"

#include <mutex>

#include "agent/key_file.hpp"
#include "agent/kind_probe.hpp"
#include "agent/log_line.hpp"
#include "core/base/error.hpp"
#include "ethtool_ctl/file_settings_journal.hpp"

namespace nm {
namespace {

// The journal of an agent that changes nothing: there is never anything to put back.
class NoJournal final : public SettingsJournal {
public:
    void remember(const LinkState& original) override {
        throw Error(ErrorKind::Failed, "journal " + original.name + ": this agent has no settings control and no journal");
    }
    void record(const LinkState& link, const SettingWrites&) override { remember(link); }
    SettingWrites writes(const LinkState&) override { return {}; }
    void release(const LinkState&) override {}
    std::vector<JournalReport> restore(const RestoreOptions&) override { return {}; }
};

std::string joined(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
    return out;
}

}  // namespace

AgentServer::AgentServer(AgentServerOptions options) : options_(std::move(options)) {
    // Every line goes out made safe and one at a time, whichever thread writes it.
    auto mutex = std::make_shared<std::mutex>();
    const auto sink = options_.log;
    log_ = [mutex, sink](const std::string& line) {
        if (!sink) return;
        std::lock_guard lock(*mutex);
        sink(safe_log_line(line));
    };
    const auto& log = log_;

    PeerAgentOptions agent;
    agent.allowed.insert(options_.allow_control.begin(), options_.allow_control.end());
    if (!options_.allow_kinds.empty()) agent.kinds = parse_agent_kinds(options_.allow_kinds);
    if (const auto key_file = key_file_from(options_.key_file); !key_file.empty()) agent.key = load_key(key_file);
    // With a key, every traffic test must prove it holds it too (core/control/test_auth.hpp).
    const std::string test_key = agent.key ? std::string(agent.key->bytes()) : std::string();
    agent.heartbeat_timeout = options_.heartbeat_timeout;
    agent.log = log;
    for (const auto& iface : agent.allowed) {
        try {
            device_.read(iface);
        } catch (const Error& e) {
            throw usage_error("--allow-control " + iface + ": " + e.what());
        }
    }
    const bool control = agent.key.has_value() && !agent.allowed.empty();
    if (control) {
        // A kind allowed but out of this process's reach (a sandbox's read-only /sys) is not offered: a
        // client learns it from the challenge, before it changes anything, instead of at apply or restore.
        agent.unavailable =
            unavailable_kinds(agent.kinds, std::vector<std::string>(agent.allowed.begin(), agent.allowed.end()), system_kind_probe_ops());
        for (const auto& [kind, why] : agent.unavailable) log(kind + " is allowed but cannot be changed here, so it is not offered: " + why);
        // The agent journals before its first change (the journal makes its directory and reports its
        // problems as nm::Error). It is touched only by an agent that may change settings.
        journal_ = std::make_unique<FileSettingsJournal>(options_.journal);
    } else {
        journal_ = std::make_unique<NoJournal>();
    }
    agent_.emplace(device_, *journal_, clock_, std::move(agent));
    // Entries of an agent that is gone (crashed, killed) are put back before anyone is served; those of
    // one that still runs (another agent on this journal) are its own and left alone, with a line.
    for (const auto& r : agent_->restore_leftover()) {
        log(r.action == JournalAction::Restored
                ? "restored " + r.ifname + " from the journal a previous agent left" + (r.note.empty() ? "" : " (" + r.note + ")")
                : r.ifname + ": " + r.note);
    }
    const auto caps = agent_->capabilities();
    if (caps.control) {
        log("settings control allowed on " + joined(caps.interfaces) + " for clients holding the key, of the kinds " +
            (caps.kinds.empty() ? std::string("(none)") : joined(caps.kinds)));
    } else {
        log("settings changes refused: " + caps.why + "; traffic tests are served");
    }
    ServerOptions server = options_.server;
    server.control = &*agent_;
    server.key = test_key;
    if (!server.on_refused) server.on_refused = log;
    server_.emplace(std::move(server));
}

AgentServer::~AgentServer() = default;

uint16_t AgentServer::port() const { return server_->port(); }

void AgentServer::serve(std::stop_token stop) {
    server_->serve(stop);
    for (const auto& r : agent_->restore_all()) log_("restored " + r.ifname + " on stop");
}

}  // namespace nm
