//===- Rows.h - Row-local access, shared by fusion and the cuda mapping -*- C++ -*-===//
//
// The reduction rule (kiln-form-kernels) groups ops that work row by row, and the
// cuda row kernel (kiln-map-to-gpu) maps such a group as one launch; both decide
// row-locality by the same test on indexing maps.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_FUSION_ROWS_H
#define KILN_PASSES_FUSION_ROWS_H

#include "mlir/IR/AffineMap.h"
#include "mlir/IR/BuiltinTypeInterfaces.h"

namespace kiln {

/// True when the map's first n results are the loops d0 .. d(n-1): the access
/// stays in the row the first n loop indices name.
inline bool leadsWithRows(mlir::AffineMap map, int64_t n) {
  if (static_cast<int64_t>(map.getNumResults()) < n)
    return false;
  for (int64_t i = 0; i < n; ++i)
    if (map.getResult(i) != mlir::getAffineDimExpr(i, map.getContext()))
      return false;
  return true;
}

/// True when a row-major reshape from `from` to `to` keeps every element in its
/// row: both have at least n dims and the same leading n sizes.
inline bool keepsLeadingDims(mlir::ShapedType from, mlir::ShapedType to, int64_t n) {
  return from.getRank() >= n && to.getRank() >= n &&
         from.getShape().take_front(n) == to.getShape().take_front(n);
}

} // namespace kiln

#endif // KILN_PASSES_FUSION_ROWS_H
