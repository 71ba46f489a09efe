//===- PrecisionCheck.h - `kiln compile --precision fp16|auto` -*- C++ -*-===//
//
// FP16 that checks itself. Before the requested build, Kiln builds the model for
// the host twice with every node output exposed, at fp32 and at fp16, runs both
// on the sample inputs (--sample-input, others generated) and compares every
// tensor. `fp16` warns naming the first tensor that becomes non-finite where f32
// was finite. `auto` first keeps in f32 every node that reads or writes values
// past f16's range (65504) in the f32 run, then moves nodes back to f32 until
// every output is within --fp16-tolerance (max abs error <= tolerance x the f32
// output's max magnitude) and nothing is non-finite where f32 was finite: first
// the nodes where overflow starts (output non-finite, inputs finite), else those whose error
// grows past the tolerance (output error over the tolerance and over twice their
// inputs'), else the one whose error grows most; one fp16 build and run per
// round. The report lists the nodes kept and why, each output's final error and
// the check's time.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_DRIVER_PRECISIONCHECK_H
#define KILN_COMPILER_DRIVER_PRECISIONCHECK_H

#include "compiler/driver/Driver.h"

#include <map>
#include <string>

namespace kiln {

/// What the check found, for the report: why each node it kept in f32 is kept,
/// and what it measured.
struct PrecisionOutcome {
  std::map<std::string, std::string> keepF32Reasons;
  CompileReport::Precision measured;
};

/// compileModel (Driver.h): the check where the request asks for it, then the
/// requested build.
bool compileWithPrecision(const CompileRequest &request, std::string &error);

/// One compile exactly as `request` says (its keepF32 as given), reporting
/// `outcome`; what the check's own builds and the final build run.
bool compileOnce(const CompileRequest &request, const PrecisionOutcome &outcome,
                 std::string &error);

} // namespace kiln

#endif // KILN_COMPILER_DRIVER_PRECISIONCHECK_H
