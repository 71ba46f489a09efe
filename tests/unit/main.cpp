// Catch2's main for Kiln's unit tests.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
