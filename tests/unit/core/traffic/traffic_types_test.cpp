#include <catch2/catch.hpp>

#include "core/traffic/traffic_types.hpp"

TEST_CASE("opposite flips forward and reverse, bidir stays bidir", "[unit]") {
    CHECK(nm::opposite(nm::Direction::Forward) == nm::Direction::Reverse);
    CHECK(nm::opposite(nm::Direction::Reverse) == nm::Direction::Forward);
    CHECK(nm::opposite(nm::Direction::Bidir) == nm::Direction::Bidir);
}

TEST_CASE("LossStats += adds the counts, keeps the worse jitter and recomputes percent", "[unit]") {
    nm::LossStats a{100, 90, 10, 1, 2, 10.0, 0.5};
    const nm::LossStats b{300, 290, 10, 3, 4, 3.3, 1.5};
    a += b;
    CHECK(a.sent == 400);
    CHECK(a.received == 380);
    CHECK(a.lost == 20);
    CHECK(a.duplicates == 4);
    CHECK(a.reordered == 6);
    CHECK(a.jitter_ms == 1.5);
    CHECK(a.percent == Approx(5.0));  // 20 of 400, not 10 + 3.3
    nm::LossStats none;
    none += nm::LossStats{};
    CHECK(none.percent == 0);
}
