#include "ethtool_ctl/qdisc.hpp"

#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <sched.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <exception>
#include <thread>

#include "core/base/error.hpp"

namespace nm {
namespace {

constexpr uint32_t kHtbVersion = 3;  // HTB_VER >> 16: the only version htb_init accepts

const tcmsg* tc_header(nl::Bytes message) {
    if (message.size() < NLMSG_LENGTH(sizeof(tcmsg))) throw Error(ErrorKind::Failed, "qdisc message shorter than its header");
    return static_cast<const tcmsg*>(mnl_nlmsg_get_payload(reinterpret_cast<const nlmsghdr*>(message.data())));
}

nl::Bytes tc_attrs(nl::Bytes message) {
    const size_t off = NLMSG_LENGTH(NLMSG_ALIGN(sizeof(tcmsg)));
    const auto* h = reinterpret_cast<const nlmsghdr*>(message.data());
    return message.subspan(off, h->nlmsg_len - off);
}

void decode_params(QdiscState& s, const nlattr* options) {
    if (options == nullptr) return;
    const nl::Bytes payload = nl::attr_payload(options);
    if (s.kind == "pfifo" || s.kind == "bfifo") {
        if (payload.size() >= sizeof(tc_fifo_qopt)) {
            tc_fifo_qopt q{};
            std::memcpy(&q, payload.data(), sizeof q);
            s.params["limit"] = q.limit;
        }
    } else if (s.kind == "tbf") {
        static constexpr nl::AttrPolicy kTbf[] = {{TCA_TBF_PARMS, nl::AttrType::Binary}, {TCA_TBF_RATE64, nl::AttrType::U64}};
        const auto a = nl::parse_attrs<TCA_TBF_MAX>(payload, kTbf, "tbf options");
        if (a[TCA_TBF_PARMS] && nl::attr_payload(a[TCA_TBF_PARMS]).size() >= sizeof(tc_tbf_qopt)) {
            tc_tbf_qopt q{};
            std::memcpy(&q, nl::attr_payload(a[TCA_TBF_PARMS]).data(), sizeof q);
            const uint64_t rate_Bps = a[TCA_TBF_RATE64] ? nl::attr_u64(a[TCA_TBF_RATE64]) : q.rate.rate;
            s.params["rate_bps"] = rate_Bps * 8;
            s.params["limit"] = q.limit;
            // buffer is in psched ticks of 64 ns (PSCHED_SHIFT 6): the bucket is that long at the rate.
            const double buffer_s = static_cast<double>(uint64_t{q.buffer} << 6) / 1e9;
            s.params["burst_bytes"] = static_cast<uint64_t>(std::llround(buffer_s * static_cast<double>(rate_Bps)));
        }
    } else if (s.kind == "htb") {
        static constexpr nl::AttrPolicy kHtb[] = {{TCA_HTB_INIT, nl::AttrType::Binary}};
        const auto a = nl::parse_attrs<TCA_HTB_MAX>(payload, kHtb, "htb options");
        if (a[TCA_HTB_INIT] && nl::attr_payload(a[TCA_HTB_INIT]).size() >= sizeof(tc_htb_glob)) {
            tc_htb_glob g{};
            std::memcpy(&g, nl::attr_payload(a[TCA_HTB_INIT]).data(), sizeof g);
            s.params["default_class"] = g.defcls;
        }
    }
}

void put_options(nl::NlRequest& req, const QdiscSpec& spec) {
    if (spec.kind == "pfifo" || spec.kind == "bfifo") {
        if (!spec.limit) return;
        tc_fifo_qopt q{};
        q.limit = *spec.limit;
        req.put_binary(TCA_OPTIONS, &q, sizeof q);
    } else if (spec.kind == "tbf") {
        const uint64_t rate_Bps = spec.rate_bps.value_or(0) / 8;
        const uint32_t burst = spec.burst_bytes.value_or(0);
        tc_tbf_qopt q{};
        q.rate.rate = rate_Bps >= UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(rate_Bps);
        // An Ethernet link layer: the kernel computes transmit times itself and needs no rate table.
        q.rate.linklayer = TC_LINKLAYER_ETHERNET;
        // As tc does it: the queue holds what the rate drains in latency_ms, plus the bucket.
        q.limit =
            spec.limit
                ? *spec.limit
                : static_cast<uint32_t>(std::min<double>(UINT32_MAX, static_cast<double>(rate_Bps) * spec.latency_ms.value_or(0) / 1e3 + burst));
        auto opts = req.nest(TCA_OPTIONS);
        req.put_binary(TCA_TBF_PARMS, &q, sizeof q);
        if (rate_Bps >= UINT32_MAX) {
            const uint64_t r = rate_Bps;
            req.put_binary(TCA_TBF_RATE64, &r, sizeof r);
        }
        req.put_u32(TCA_TBF_BURST, burst);
        opts.close();
    } else if (spec.kind == "htb") {
        tc_htb_glob g{};
        g.version = kHtbVersion;
        g.rate2quantum = 10;
        g.defcls = spec.default_class.value_or(0);
        auto opts = req.nest(TCA_OPTIONS);
        req.put_binary(TCA_HTB_INIT, &g, sizeof g);
        opts.close();
    }
}

nl::NlRequest qdisc_request(uint16_t type, uint16_t flags, int32_t ifindex, uint32_t handle) {
    auto req = nl::NlRequest::plain(type, static_cast<uint16_t>(NLM_F_REQUEST | NLM_F_ACK | flags), sizeof(tcmsg));
    auto* tc = static_cast<tcmsg*>(req.extra_header());
    tc->tcm_family = AF_UNSPEC;
    tc->tcm_ifindex = ifindex;
    tc->tcm_parent = TC_H_ROOT;
    tc->tcm_handle = handle;
    return req;
}

Error qdisc_error(const Error& e, const std::string& action, const std::string& ifname) {
    const std::string extack = e.context().extack;
    return Error(e.kind() == ErrorKind::Usage ? ErrorKind::Usage : ErrorKind::Failed, action + " on " + ifname, e.code(), {ifname, "qdisc", extack});
}

}  // namespace

std::optional<QdiscState> decode_root_qdisc(nl::Bytes message, int32_t ifindex) {
    const tcmsg* tc = tc_header(message);
    if (tc->tcm_ifindex != ifindex || tc->tcm_parent != TC_H_ROOT) return std::nullopt;
    static constexpr nl::AttrPolicy kPolicy[] = {{TCA_KIND, nl::AttrType::String}, {TCA_OPTIONS, nl::AttrType::Binary}};
    const auto a = nl::parse_attrs<TCA_OPTIONS>(tc_attrs(message), kPolicy, "qdisc");
    if (!a[TCA_KIND]) throw Error(ErrorKind::Failed, "qdisc without a kind");
    QdiscState s;
    s.kind = nl::attr_string(a[TCA_KIND]);
    s.handle = tc->tcm_handle;
    decode_params(s, a[TCA_OPTIONS]);
    return s;
}

void check_qdisc_spec(const QdiscSpec& s) {
    if (!qdisc_kind_allowed(s.kind)) {
        throw usage_error("kind: \"" + s.kind + "\" is not a qdisc kind nicmatrix sets (noqueue, mq, pfifo_fast, pfifo, bfifo, tbf, htb, fq_codel)");
    }
    const auto refuse = [&](const char* param) { throw usage_error(std::string(param) + ": the " + s.kind + " qdisc takes no such parameter"); };
    if (s.kind == "pfifo_fast") {
        if (s.limit || s.rate_bps || s.burst_bytes || s.latency_ms || s.default_class)
            refuse(s.limit ? "limit" : s.rate_bps ? "rate" : s.burst_bytes ? "burst" : s.latency_ms ? "latency_ms" : "default");
    } else if (s.kind == "pfifo" || s.kind == "bfifo") {
        if (s.rate_bps || s.burst_bytes || s.latency_ms || s.default_class)
            refuse(s.rate_bps ? "rate" : s.burst_bytes ? "burst" : s.latency_ms ? "latency_ms" : "default");
    } else if (s.kind == "tbf") {
        if (s.default_class) refuse("default");
        if (!s.rate_bps || *s.rate_bps == 0) throw usage_error("rate: the tbf qdisc needs a rate (\"1gbit\", \"100mbit\" or bits/s)");
        if (!s.burst_bytes || *s.burst_bytes == 0) throw usage_error("burst: the tbf qdisc needs a burst in bytes");
        if (!s.limit && !s.latency_ms) throw usage_error("latency_ms: the tbf qdisc needs latency_ms or limit");
        if (s.limit && s.latency_ms) throw usage_error("limit: give the tbf qdisc latency_ms or limit, not both");
    } else if (s.kind == "htb") {
        if (s.limit || s.rate_bps || s.burst_bytes || s.latency_ms)
            refuse(s.limit ? "limit" : s.rate_bps ? "rate" : s.burst_bytes ? "burst" : "latency_ms");
    } else if (s.limit || s.rate_bps || s.burst_bytes || s.latency_ms || s.default_class) {
        throw usage_error("kind: parameters are known for pfifo, bfifo, tbf and htb only; give \"" + s.kind + "\" as a plain kind");
    }
}

std::string describe_qdisc(const QdiscSpec& s) {
    std::string out = s.kind;
    if (s.rate_bps) out += " rate_bps=" + std::to_string(*s.rate_bps);
    if (s.burst_bytes) out += " burst=" + std::to_string(*s.burst_bytes);
    if (s.latency_ms) out += " latency_ms=" + std::to_string(*s.latency_ms).substr(0, std::to_string(*s.latency_ms).find('.') + 3);
    if (s.limit) out += " limit=" + std::to_string(*s.limit);
    if (s.default_class) out += " default=" + std::to_string(*s.default_class);
    return out;
}

std::string describe_qdisc(const QdiscState& s) {
    std::string out = s.kind + (s.builtin() ? " (default)" : "");
    for (const auto& [k, v] : s.params) out += " " + k + "=" + std::to_string(v);
    return out;
}

bool qdisc_matches(const QdiscSpec& spec, const QdiscState& state) {
    if (spec.kind != state.kind || state.builtin()) return false;
    const auto param = [&](const char* key) -> std::optional<uint64_t> {
        const auto it = state.params.find(key);
        return it == state.params.end() ? std::nullopt : std::optional<uint64_t>(it->second);
    };
    if (spec.rate_bps && param("rate_bps") != *spec.rate_bps / 8 * 8) return false;
    if (spec.kind == "pfifo" && spec.limit && param("limit") != *spec.limit) return false;
    if (spec.kind == "tbf" && spec.limit && param("limit") != *spec.limit) return false;
    if (spec.default_class && param("default_class") != *spec.default_class) return false;
    return true;
}

QdiscControl::QdiscControl() : sock_(nl::NetlinkSocket::open(NETLINK_ROUTE)) {}

std::optional<QdiscState> QdiscControl::root(int32_t ifindex) {
    auto req = nl::NlRequest::plain(RTM_GETQDISC, NLM_F_REQUEST | NLM_F_DUMP, sizeof(tcmsg));
    auto* tc = static_cast<tcmsg*>(req.extra_header());
    tc->tcm_family = AF_UNSPEC;
    tc->tcm_ifindex = ifindex;  // kernels since 4.x filter the dump by it; the decoder checks anyway
    std::optional<QdiscState> found;
    sock_.transact(req, [&](nl::Bytes message) {
        if (!found) found = decode_root_qdisc(message, ifindex);
    });
    return found;
}

void QdiscControl::replace(int32_t ifindex, const QdiscSpec& spec, const std::string& ifname) {
    auto req = qdisc_request(RTM_NEWQDISC, NLM_F_CREATE | NLM_F_REPLACE, ifindex, 0);
    req.put_strz(TCA_KIND, spec.kind);
    put_options(req, spec);
    try {
        sock_.transact(req, [](nl::Bytes) {});
    } catch (const Error& e) {
        throw qdisc_error(e, "set root qdisc " + describe_qdisc(spec), ifname);
    }
}

void probe_qdisc(const QdiscSpec& spec) {
    check_qdisc_spec(spec);
    std::exception_ptr failure;
    std::thread worker([&] {
        try {
            // A namespace of this thread only: it and its loopback vanish when the thread ends.
            if (::unshare(CLONE_NEWNET) != 0) throw system_error("unshare a scratch network namespace", errno);
            QdiscControl qc;
            qc.replace(1, spec, "the loopback of a scratch namespace");
        } catch (...) {
            failure = std::current_exception();
        }
    });
    worker.join();
    if (!failure) return;
    try {
        std::rethrow_exception(failure);
    } catch (const Error& e) {
        if (e.code().value() == EPERM) throw;
        const std::string why = e.context().extack.empty() ? e.code().message() : e.context().extack;
        throw usage_error("kind: the kernel does not take the qdisc " + describe_qdisc(spec) + ": " + why);
    }
}

}  // namespace nm
