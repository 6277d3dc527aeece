//===- Checkpoint.h - Training state saved to and loaded from disk -*- C++ -*-===//
//
// The directory amp-run --save-state writes and --load-state reads, also
// Session.save and Session.load: one <name>.npy per carried argument
// (parameters, buffers, optimizer and scaler state) and hyperparameter, by
// the argument's name (amp.name, else arg<i>), and step.npy (i64[2]: the
// steps done and the seed of the run's batches). docs/Running.md describes
// it; docs/Reliability.md why it is written the way it is.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_RUNNER_CHECKPOINT_H
#define AMP_RUNNER_CHECKPOINT_H

#include "amp/Runner/CompiledStep.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <cstdint>

namespace mlir::amp {

/// Where a run stands: what a resumed run needs besides the arrays.
struct RunPosition {
  int64_t stepsDone = 0;
  uint64_t seed = 0;
};

/// Writes the training state of `step` as the directory `dir`, atomically:
/// the files go to `dir`.partial and are flushed to disk (fsync), then that
/// directory takes the place of `dir` in one rename (exchanged with the old
/// one, which is then removed), so that a process killed at any moment
/// leaves `dir` a complete checkpoint, the last one written. An existing
/// `dir` must hold nothing but .npy files: it is replaced as a whole.
llvm::Error saveCheckpoint(llvm::StringRef dir, const CompiledStep &step,
                           RunPosition position);

/// Reads a checkpoint into `step`: every carried argument, and every
/// hyperparameter whose file is there. Every file is read and checked
/// (dtype, shape) before anything is set; the errors name the file.
llvm::Expected<RunPosition> loadCheckpoint(llvm::StringRef dir,
                                           CompiledStep &step);

} // namespace mlir::amp

#endif // AMP_RUNNER_CHECKPOINT_H
