// Seeded random streams, one per component, named so that adding a component
// does not shift the numbers another one draws. Distributions come from
// Boost.Random, whose algorithms are fixed across platforms and library
// versions (std:: distributions are not).
#pragma once

#include <boost/random/exponential_distribution.hpp>
#include <boost/random/lognormal_distribution.hpp>
#include <boost/random/mersenne_twister.hpp>
#include <boost/random/normal_distribution.hpp>
#include <boost/random/uniform_int_distribution.hpp>
#include <boost/random/uniform_real_distribution.hpp>
#include <cstdint>
#include <string_view>

namespace schedlab {

// splitmix64: a well-mixed 64-bit finaliser used to derive seeds.
constexpr uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

constexpr uint64_t fnv1a64(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

// Seed of run `run` of an experiment whose base seed is `base`.
constexpr uint64_t derive_seed(uint64_t base, uint64_t run) { return splitmix64(base ^ splitmix64(run + 1)); }

class RngStream {
 public:
  RngStream(uint64_t seed, std::string_view component) : engine_(splitmix64(seed ^ fnv1a64(component))) {}
  double uniform(double lo, double hi) { return boost::random::uniform_real_distribution<double>(lo, hi)(engine_); }
  int64_t uniform_int(int64_t lo, int64_t hi) {
    return boost::random::uniform_int_distribution<int64_t>(lo, hi)(engine_);
  }
  double exponential(double mean) { return boost::random::exponential_distribution<double>(1.0 / mean)(engine_); }
  double normal(double mean, double sd) { return boost::random::normal_distribution<double>(mean, sd)(engine_); }
  double lognormal(double mean, double sd) {
    return boost::random::lognormal_distribution<double>(mean, sd)(engine_);
  }
  boost::random::mt19937_64& engine() { return engine_; }

 private:
  boost::random::mt19937_64 engine_;
};

}  // namespace schedlab
