// Marshalling and parsing kernels: one generic function per measured step,
// instantiated for every (codec, payload) pair of the registration tables.
#include "codec_bench.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

#include "common/clock.h"
#include "common/codec.h"
#include "common/input_checks.h"
#include "harness/heap_policy.h"
#include "harness/profiling.h"
#include "name_filter.h"
#include "payload_cache.h"
#include "soap/soap_codecs.h"

namespace wsb::bench {
namespace {

enum class Step { encode, decode, bind, write, read, unbind };

const char* step_name(Step step) {
  switch (step) {
    case Step::encode:
      return "encode";
    case Step::decode:
      return "decode";
    case Step::bind:
      return "bind";
    case Step::write:
      return "write";
    case Step::read:
      return "read";
    case Step::unbind:
      return "unbind";
  }
  return "?";
}

bool is_stage(Step step) { return step != Step::encode && step != Step::decode; }

// The headline bytes_per_second counts the application data (raw_bytes),
// the same for every codec: counted over wire bytes, a verbose encoding
// would look faster for writing more. The wire rate is kept beside it.
void report(benchmark::State& state, const Payload& payload, std::size_t wire_bytes) {
  const auto iterations = static_cast<std::int64_t>(state.iterations());
  state.SetBytesProcessed(iterations * static_cast<std::int64_t>(raw_size(payload)));
  state.SetItemsProcessed(iterations * static_cast<std::int64_t>(item_count(payload)));
  state.counters["wire_bytes_per_second"] =
      benchmark::Counter(static_cast<double>(iterations) * static_cast<double>(wire_bytes),
                         benchmark::Counter::kIsRate, benchmark::Counter::kIs1024);
  state.counters["wire_bytes"] = static_cast<double>(wire_bytes);
  state.counters["raw_bytes"] = static_cast<double>(raw_size(payload));
}

// Encodes, decodes and compares before anything is timed. A fast wrong
// number is worse than none, so a mismatch skips the case with the reason.
// A second decode path (`primary` non-null: json-simdjson of json's bytes)
// must also decode the wire bytes to what the primary codec's own decode
// gives.
bool verified(benchmark::State& state, Codec& codec, const Payload& payload, std::string& wire,
              const CodecEntry* primary) {
  codec.encode(payload, wire);
  Payload decoded;
  codec.decode(wire, decoded);
  std::string difference = describe_difference(payload, decoded, codec.double_fidelity());
  if (difference.empty() && primary != nullptr) {
    Payload by_primary;
    primary->make()->decode(wire, by_primary);
    difference = describe_difference(by_primary, decoded, codec.double_fidelity());
    if (!difference.empty())
      difference = "the same bytes decode otherwise with " + primary->name + ": " + difference;
  }
  if (!difference.empty()) {
    state.SkipWithError(("verification failed: " + difference).c_str());
    return false;
  }
  return true;
}

// Minor page faults per iteration of a loop show what the heap policy
// does: a case whose freed memory goes back to the kernel faults it in
// again.
void report_faults(benchmark::State& state, long faults_before) {
  state.counters["page_faults_per_op"] =
      benchmark::Counter(static_cast<double>(thread_minor_faults() - faults_before),
                         benchmark::Counter::kAvgIterations);
}

// The timed loop of every codec row. One untimed call first, so that the
// first timed one does what every other does (buffers at their size, a
// previous result to replace). perf samples the loop; callgrind counts
// each call alone, without the loop's bookkeeping.
template <typename StepOnce>
void timed_loop(benchmark::State& state, StepOnce step_once) {
  step_once();
  const long faults_before = thread_minor_faults();
  {
    const SampledRegion sampled;
    for (auto _ : state) {
      const CountedCall counted;
      step_once();
      benchmark::ClobberMemory();
    }
  }
  report_faults(state, faults_before);
}

// The loop of an unbind that consumes its representation (soap): each
// iteration reads first, neither timed, counted nor sampled, then times
// the unbind alone by hand (the case uses manual time).
void consuming_unbind_loop(benchmark::State& state, CodecStages& stages, std::string_view wire,
                           Payload& decoded) {
  stages.read(wire);
  stages.unbind(decoded);
  const long faults_before = thread_minor_faults();
  for (auto _ : state) {
    stages.read(wire);
    const SampledRegion sampled;
    const CountedCall counted;
    const std::int64_t start = now_ns();
    stages.unbind(decoded);
    benchmark::DoNotOptimize(&decoded);
    benchmark::ClobberMemory();
    state.SetIterationTime(static_cast<double>(now_ns() - start) * 1e-9);
  }
  report_faults(state, faults_before);
}

void run_step(benchmark::State& state, const CodecEntry& entry, Step step, const PayloadSpec& spec,
              Allocation allocation, const CodecEntry* primary = nullptr) {
  const Payload& payload = cached_payload(spec);
  const auto codec = entry.make();
  codec->set_allocation(allocation);
  if (const std::string reason = codec->unsupported(payload); !reason.empty()) {
    state.SkipWithError(("unsupported: " + reason).c_str());
    return;
  }
  if (const std::string reason = codec->not_applicable(payload); !reason.empty()) {
    state.SkipWithError(("not applicable: " + reason).c_str());
    return;
  }
  std::string wire;
  if (!verified(state, *codec, payload, wire, primary)) return;
  CodecStages* stages = codec->stages();
  std::string out;
  Payload decoded;

  // The stage a timed step starts from, made before anything is sampled.
  if (step == Step::write) stages->bind(payload);
  if (step == Step::unbind && !stages->unbind_consumes()) stages->read(wire);

  switch (step) {
    case Step::encode:
      // Timed: model -> wire bytes through the library (for gSOAP, its
      // counting pass too), into a buffer whose capacity is reused.
      timed_loop(state, [&] {
        codec->encode(payload, out);
        benchmark::DoNotOptimize(out.data());
      });
      break;
    case Step::decode:
      // Timed: wire bytes -> fully materialised model, including the
      // release of the previous iteration's model it replaces.
      timed_loop(state, [&] {
        codec->decode(wire, decoded);
        benchmark::DoNotOptimize(&decoded);
      });
      break;
    case Step::bind:
      // Timed: model -> the library's representation (gSOAP structs,
      // xmlrpc-c values, protobuf message), replacing the previous one.
      timed_loop(state, [&] { stages->bind(payload); });
      break;
    case Step::write:
      // Timed: an already bound representation -> wire bytes.
      timed_loop(state, [&] {
        stages->write(out);
        benchmark::DoNotOptimize(out.data());
      });
      break;
    case Step::read:
      // Timed: wire bytes -> the library's representation (DOM, value
      // tree, structs, message), replacing the previous one.
      timed_loop(state, [&] { stages->read(wire); });
      break;
    case Step::unbind:
      if (stages->unbind_consumes()) {
        consuming_unbind_loop(state, *stages, wire, decoded);
        break;
      }
      // Timed: an already parsed representation -> model.
      timed_loop(state, [&] {
        stages->unbind(decoded);
        benchmark::DoNotOptimize(&decoded);
      });
      break;
  }
  report(state, payload, wire.size());
  if (const DoubleFidelity f = codec->double_fidelity(); !f.exact())
    state.SetLabel("verified with doubles to " + std::to_string(f.relative) + " relative");
}

// Skips instead of aborting the whole run: one codec's failure on one
// payload must not lose what the other cases measure.
void guarded_step(benchmark::State& state, const CodecEntry& entry, Step step,
                  const PayloadSpec& spec, Allocation allocation, const CodecEntry* primary) {
  try {
    run_step(state, entry, step, spec, allocation, primary);
  } catch (const std::exception& e) {
    state.SkipWithError((std::string(step_name(step)) + " failed: " + e.what()).c_str());
  }
}

// The floor: copying the payload's raw bytes once, the least any encoding
// of it can cost.
void run_memcpy(benchmark::State& state, const PayloadSpec& spec) {
  const Payload& payload = cached_payload(spec);
  const std::size_t size = raw_size(payload);
  const std::string source(size, 'x');
  std::string destination(size, '\0');
  // Timed: memcpy of raw_bytes between two preallocated buffers.
  timed_loop(state, [&] {
    std::memcpy(destination.data(), source.data(), size);
    benchmark::DoNotOptimize(destination.data());
  });
  report(state, payload, size);
}

// The stages of a codec, from an instance made for asking.
struct StageInfo {
  bool encode = false;
  bool decode = false;
  bool unbind_consumes = false;
};

StageInfo stage_info(const CodecEntry& entry) {
  std::unique_ptr<Codec> codec;
  try {
    codec = entry.make();
  } catch (const std::exception&) {
    return {};  // the encode and decode cases report the failure
  }
  const CodecStages* stages = codec->stages();
  if (stages == nullptr) return {};
  return {stages->splits_encode(), stages->splits_decode(), stages->unbind_consumes()};
}

bool stage_available(const StageInfo& info, Step step) {
  return (step == Step::bind || step == Step::write) ? info.encode : info.decode;
}

// The codec whose bytes a second decode path reads (json for
// json-simdjson), among the registered ones; null for any other codec.
const CodecEntry* primary_of(const std::vector<CodecEntry>& codecs, const CodecEntry& entry) {
  if (entry.decode_path_of.empty()) return nullptr;
  const auto it = std::find_if(codecs.begin(), codecs.end(), [&entry](const CodecEntry& c) {
    return c.name == entry.decode_path_of;
  });
  return it == codecs.end() ? &find_codec(entry.decode_path_of) : &*it;
}

// Iterations of an unbind row whose every iteration needs a read first.
constexpr std::int64_t kConsumingUnbindIterations = 200;

// The soap codec with gSOAP's chunked output (SOAP_IO_CHUNK): beside
// encode/soap/<payload>, which includes gSOAP's counting pass for the
// Content-Length, encode-chunked/soap/<payload> is the same envelope
// without it, in HTTP chunks: the pair says what Content-Length costs.
const CodecEntry& chunked_soap() {
  static const CodecEntry entry{
      "soap", "soap, chunked output (SOAP_IO_CHUNK)", soap::make_soap_chunked_codec, {}};
  return entry;
}

// Before timing an encode-chunked row: its envelope is byte for byte the
// one encode/soap writes (run_step then checks the round trip).
bool same_envelope_as_content_length(benchmark::State& state, const PayloadSpec& spec) {
  const Payload& payload = cached_payload(spec);
  std::string chunked;
  std::string plain;
  soap::make_soap_chunked_codec()->encode(payload, chunked);
  soap::make_soap_codec()->encode(payload, plain);
  std::string data;
  ChunkedCheck framing;
  const std::string error =
      framing.feed(chunked, [&data](std::string_view bytes) { data.append(bytes); });
  if (!error.empty() || !framing.done() || data != plain) {
    state.SkipWithError(
        "verification failed: the chunked body does not carry the envelope "
        "encode/soap writes");
    return false;
  }
  return true;
}

// The step names a codec row can have, for asking the filter.
constexpr const char* kRowFamilies[] = {"memcpy", "encode", "decode",         "bind",
                                        "write",  "read",   "encode-chunked", "unbind"};

bool selects_a_row(const NameFilter& filter, const std::vector<CodecEntry>& codecs,
                   const PayloadSpec& spec) {
  for (const char* family : kRowFamilies) {
    const std::string prefix = std::string(family) + "/";
    if (filter.selects(prefix + spec.label())) return true;
    for (const auto& entry : codecs)
      if (filter.selects(prefix + entry.name + "/" + spec.label())) return true;
  }
  return false;
}

// A filter that names payloads (encode/json/objects/800, scripts/count's
// --default-codecs) gets the ones it names from the whole catalogue: the
// standard sweep keeps three, and running nothing would look like a broken
// filter. A filter that selects rows of every payload (encode/json, none)
// names none, and gets the standard sweep's.
std::vector<PayloadSpec> payloads_for_filter(const std::vector<CodecEntry>& codecs, Sweep sweep,
                                             Strings strings) {
  auto payloads = codec_payloads(sweep, strings);
  if (sweep == Sweep::full || benchmark::GetBenchmarkFilter().empty()) return payloads;
  const NameFilter filter;
  const auto catalogue = codec_payloads(Sweep::full, strings);
  std::vector<PayloadSpec> named;
  for (const auto& spec : catalogue)
    if (selects_a_row(filter, codecs, spec)) named.push_back(spec);
  if (named.size() == catalogue.size()) return payloads;
  const auto in_standard = [&payloads](const PayloadSpec& spec) {
    return std::any_of(payloads.begin(), payloads.end(),
                       [&spec](const PayloadSpec& p) { return p.label() == spec.label(); });
  };
  if (!std::all_of(named.begin(), named.end(), in_standard))
    std::fprintf(stderr,
                 "bench: the filter names codec payloads of the full sweep: running those "
                 "(--full runs every case)\n");
  return named;
}

}  // namespace

void register_codec_benchmarks(Sweep sweep, Strings strings, std::int64_t iterations,
                               Allocation allocation) {
  register_codec_benchmarks(all_codecs(), sweep, strings, iterations, allocation);
}

void register_codec_benchmarks(const std::vector<CodecEntry>& codecs, Sweep sweep, Strings strings,
                               std::int64_t iterations, Allocation allocation) {
  const auto payloads = payloads_for_filter(codecs, sweep, strings);
  for (const auto& spec : payloads) {
    auto* b = benchmark::RegisterBenchmark(("memcpy/" + spec.label()).c_str(),
                                           [spec](benchmark::State& s) { run_memcpy(s, spec); });
    if (iterations > 0) b->Iterations(iterations);
  }
  for (const Step step :
       {Step::encode, Step::decode, Step::bind, Step::write, Step::read, Step::unbind}) {
    for (const auto& entry : codecs) {
      const StageInfo info = stage_info(entry);
      if (is_stage(step) && !stage_available(info, step)) continue;
      // Its encode is the other codec's, row for row.
      if (step == Step::encode && !entry.decode_path_of.empty()) continue;
      // None of the sweep's payloads is a text; a text's encode is a copy.
      if (entry.texts_only) continue;
      const CodecEntry* primary = primary_of(codecs, entry);
      for (const auto& spec : payloads) {
        const std::string name =
            std::string(step_name(step)) + "/" + entry.name + "/" + spec.label();
        auto* b = benchmark::RegisterBenchmark(
            name.c_str(), [&entry, step, spec, allocation, primary](benchmark::State& s) {
              guarded_step(s, entry, step, spec, allocation, primary);
            });
        if (step == Step::unbind && info.unbind_consumes) {
          b->UseManualTime();
          // min_time counts only the timed unbind, while every iteration
          // also reads untimed (up to ~450x the unbind's time): left to
          // min_time, one row ran for minutes. A fixed count bounds it.
          b->Iterations(iterations > 0 ? iterations : kConsumingUnbindIterations);
        } else if (iterations > 0) {
          b->Iterations(iterations);
        }
      }
    }
  }
  // Only beside the soap codec's own rows (tests register codecs of their
  // own).
  const bool soap_listed = std::any_of(codecs.begin(), codecs.end(),
                                       [](const CodecEntry& c) { return c.name == "soap"; });
  if (!soap_listed) return;
  for (const auto& spec : payloads) {
    auto* b = benchmark::RegisterBenchmark(
        ("encode-chunked/soap/" + spec.label()).c_str(), [spec, allocation](benchmark::State& s) {
          try {
            if (same_envelope_as_content_length(s, spec))
              run_step(s, chunked_soap(), Step::encode, spec, allocation);
          } catch (const std::exception& e) {
            s.SkipWithError((std::string("encode-chunked failed: ") + e.what()).c_str());
          }
        });
    if (iterations > 0) b->Iterations(iterations);
  }
}

}  // namespace wsb::bench
