//===- WeightsFile.cpp - Write model.weights ------------------------------===//
//
// This file implements the weights writer (WeightsFile.h). The weights are
// streamed to the file in offset order (no image of the payload in memory):
// dense resources as they are, dense attributes expanded when splat, one byte per
// bool. A file already holding the same bytes is left untouched.
//
//===----------------------------------------------------------------------===//
#include "codegen/emit/WeightsFile.h"

#include "kiln/runtime/WeightsFormat.h"

#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>
#include <vector>

using namespace mlir;

namespace kiln {
namespace {

/// Writes `value`'s bytes (expanded if splat, one byte per bool) with `emit`;
/// false with `error` set when the attribute holds no data of its type's size.
bool writeElements(ElementsAttr value, llvm::function_ref<void(const char *, size_t)> emit,
                   std::string &error) {
  auto type = cast<ShapedType>(value.getType());
  Type elem = type.getElementType();
  int64_t n = type.getNumElements(), size = (elem.getIntOrFloatBitWidth() + 7) / 8;
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob || static_cast<int64_t>(blob->getData().size()) != n * size) {
      error = "weight resource has no data of the expected size";
      return false;
    }
    emit(blob->getData().data(), blob->getData().size());
    return true;
  }
  auto dense = dyn_cast<DenseElementsAttr>(value);
  if (!dense) {
    error = "unsupported weight attribute";
    return false;
  }
  if (elem.isInteger(1)) {
    std::vector<char> bytes;
    for (bool v : dense.getValues<bool>())
      bytes.push_back(v ? 1 : 0);
    emit(bytes.data(), bytes.size());
    return true;
  }
  ArrayRef<char> raw = dense.getRawData();
  if (dense.isSplat()) {
    for (int64_t i = 0; i < n; ++i)
      emit(raw.data(), size);
    return true;
  }
  emit(raw.data(), raw.size());
  return true;
}

} // namespace

bool writeWeightsFile(PlanOp plan, const std::string &path, uint64_t &checksum,
                      std::string &error) {
  // The weights in offset order, the gaps zero.
  uint64_t payloadBytes = plan.getWeightBytes();
  SmallVector<WeightOp> weights;
  plan.getBody().walk([&](WeightOp w) { weights.push_back(w); });
  llvm::stable_sort(weights, [](WeightOp a, WeightOp b) { return a.getOffset() < b.getOffset(); });
  // Streams the payload to `emit`; false with `error` where the weights are not
  // what the plan says.
  auto stream = [&](llvm::function_ref<void(const char *, size_t)> sink) {
    uint64_t at = 0;
    static const char zeros[4096] = {};
    auto emit = [&](const char *data, size_t size) {
      sink(data, size);
      at += size;
    };
    auto pad = [&](uint64_t to) {
      while (at < to)
        emit(zeros, std::min<uint64_t>(sizeof zeros, to - at));
    };
    for (WeightOp w : weights) {
      if (w.getOffset() < at) {
        error = "weight at offset " + std::to_string(w.getOffset()) + " overlaps the one before";
        return false;
      }
      pad(w.getOffset());
      if (!writeElements(w.getValue(), emit, error))
        return false;
      if (at > payloadBytes) {
        error = "weight at offset " + std::to_string(w.getOffset()) +
                " lies outside the planned weights";
        return false;
      }
    }
    pad(payloadBytes);
    return true;
  };
  char header[rt::kWeightsHeaderBytes] = {};
  // A file already there with the same bytes (a compile of the same model again)
  // is left as it is: comparing reads it, writing would copy every byte again.
  uint64_t existing = 0;
  if (!llvm::sys::fs::file_size(path, existing) &&
      existing == sizeof header + payloadBytes) {
    if (auto file = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                                /*RequiresNullTerminator=*/false)) {
      const char *old = (*file)->getBufferStart() + sizeof header;
      rt::WeightsChecksum sum;
      bool same = true;
      uint64_t at = 0;
      if (!stream([&](const char *data, size_t size) {
            // After the first difference the file is rewritten: nothing more to do.
            if (!same)
              return;
            same = std::memcmp(old + at, data, size) == 0;
            sum.update(data, size);
            at += size;
          }))
        return false;
      if (same) {
        checksum = sum.finish();
        rt::encodeWeightsHeader({payloadBytes, checksum}, header);
        if (std::memcmp((*file)->getBufferStart(), header, sizeof header) == 0)
          return true;
      }
    }
  }
  // The header (with the checksum) is written last, over its placeholder.
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec) {
    error = "cannot write " + path + ": " + ec.message();
    return false;
  }
  os.write(header, sizeof header);
  rt::WeightsChecksum sum;
  if (!stream([&](const char *data, size_t size) {
        os.write(data, size);
        sum.update(data, size);
      }))
    return false;
  checksum = sum.finish();
  rt::encodeWeightsHeader({payloadBytes, checksum}, header);
  os.seek(0);
  os.write(header, sizeof header);
  os.close();
  if (os.has_error()) {
    error = "cannot write " + path + ": " + os.error().message();
    os.clear_error();
    return false;
  }
  return true;
}

const char *embeddedWeightsAssembly() {
  return R"(/* Generated by kiln: the weights built into the model (--embed-weights).
   Assemble from this directory, or with -Wa,-I,DIR, so that .incbin finds model.weights. */
	.section .rodata.kiln_weights,"a",@progbits
	.balign 64
	.globl kiln_embedded_weights
	.hidden kiln_embedded_weights
kiln_embedded_weights:
	.incbin "model.weights"
	.globl kiln_embedded_weights_end
	.hidden kiln_embedded_weights_end
kiln_embedded_weights_end:
	.section .note.GNU-stack,"",@progbits
)";
}

} // namespace kiln
