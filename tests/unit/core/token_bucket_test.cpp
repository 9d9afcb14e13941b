#include <catch2/catch.hpp>

#include "core/workers/token_bucket.hpp"

namespace {

class FakeClock final : public nm::Clock {
public:
    time_point now() const override { return now_; }
    void sleep_until(time_point when) override { now_ = std::max(now_, when); }
    void advance(std::chrono::nanoseconds d) { now_ += d; }

private:
    time_point now_{std::chrono::seconds(1000)};
};

}  // namespace

TEST_CASE("TokenBucket starts empty and accrues at its rate", "[unit]") {
    FakeClock clock;
    nm::TokenBucket bucket(clock, 1000.0, 64);
    CHECK(bucket.take(10) == 0);
    clock.advance(std::chrono::milliseconds(5));
    CHECK(bucket.take(10) == 5);
    CHECK(bucket.take(10) == 0);
    clock.advance(std::chrono::microseconds(1500));
    CHECK(bucket.take(10) == 1);  // 1.5 tokens: one whole, half kept
    clock.advance(std::chrono::microseconds(500));
    CHECK(bucket.take(10) == 1);
}

TEST_CASE("TokenBucket caps a backlog at the burst", "[unit]") {
    FakeClock clock;
    nm::TokenBucket bucket(clock, 1000.0, 64);
    clock.advance(std::chrono::seconds(10));
    CHECK(bucket.take(1000) == 64);
}

TEST_CASE("TokenBucket holds the average rate when the sender sleeps until next_available", "[unit]") {
    FakeClock clock;
    const double rate = 4246.0;  // 50 Mbit/s of 1472-byte datagrams
    nm::TokenBucket bucket(clock, rate, 64);
    const auto start = clock.now();
    uint64_t sent = 0;
    while (clock.now() - start < std::chrono::seconds(10)) {
        const uint64_t n = bucket.take(64);
        sent += n;
        if (n == 0) {
            // Oversleep by 30 us every time, as a real timer does; the bucket makes it up.
            clock.sleep_until(bucket.next_available() + std::chrono::microseconds(30));
        }
    }
    CHECK(static_cast<double>(sent) == Approx(rate * 10).epsilon(0.01));
}

TEST_CASE("TokenBucket::next_available is now when a token is there, later otherwise", "[unit]") {
    FakeClock clock;
    nm::TokenBucket bucket(clock, 100.0, 1);
    CHECK(bucket.next_available() - clock.now() == std::chrono::milliseconds(10));
    clock.advance(std::chrono::milliseconds(10));
    CHECK(bucket.next_available() == clock.now());
}
