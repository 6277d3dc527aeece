//===- Checkpoint.cpp - Training state saved to and loaded from disk ------===//
//
// A checkpoint is a directory of .npy files, replaced as a whole: written
// beside it, synced, then exchanged with it by renameat2(RENAME_EXCHANGE)
// (Linux), so that it is never seen half written, even after SIGKILL or a
// power loss.
//
//===----------------------------------------------------------------------===//

#include "amp/Runner/Checkpoint.h"
#include "amp/Runner/Npy.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include <cerrno>
#include <cstdio>
#include <fcntl.h>
#include <system_error>
#include <unistd.h>

using namespace mlir;
using namespace mlir::amp;
using llvm::StringRef;
using llvm::Twine;

static constexpr StringRef kPositionFile = "step.npy";

static llvm::Error fileError(const Twine &path, const Twine &what,
                             std::error_code ec) {
  return llvm::createStringError(ec, path + ": " + what + ": " + ec.message());
}

static std::error_code lastError() {
  return std::error_code(errno, std::generic_category());
}

static std::string pathIn(StringRef dir, StringRef file) {
  llvm::SmallString<128> path(dir);
  llvm::sys::path::append(path, file);
  return std::string(path);
}

/// The arguments a checkpoint holds: the carried ones, then the
/// hyperparameters.
static llvm::SmallVector<unsigned> savedArguments(const CompiledStep &step) {
  llvm::SmallVector<unsigned> indices(step.getCarriedArguments());
  llvm::append_range(indices, step.getSignature().getArguments(
                                  ArgumentRole::Hyperparameter));
  return indices;
}

/// Writes `bytes` to `path` and waits until they are on disk.
static llvm::Error writeDurably(const std::string &path, StringRef bytes) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return fileError(path, "cannot write", lastError());
  while (!bytes.empty()) {
    ssize_t written = ::write(fd, bytes.data(), bytes.size());
    if (written < 0 && errno == EINTR)
      continue;
    if (written < 0) {
      std::error_code ec = lastError();
      ::close(fd);
      return fileError(path, "cannot write", ec);
    }
    bytes = bytes.drop_front(written);
  }
  std::error_code ec;
  if (::fsync(fd) != 0)
    ec = lastError();
  if (::close(fd) != 0 && !ec)
    ec = lastError();
  return ec ? fileError(path, "cannot write", ec) : llvm::Error::success();
}

/// Flushes a directory's entries (the names of new files, a rename) to disk.
static llvm::Error syncDirectory(const std::string &dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return fileError(dir, "cannot sync", lastError());
  std::error_code ec;
  if (::fsync(fd) != 0)
    ec = lastError();
  ::close(fd);
  return ec ? fileError(dir, "cannot sync", ec) : llvm::Error::success();
}

/// Fails unless `dir` holds only .npy files (a checkpoint, maybe partial).
static llvm::Error checkReplaceable(StringRef dir) {
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec))
    if (llvm::sys::path::extension(it->path()) != ".npy" ||
        it->type() == llvm::sys::fs::file_type::directory_file)
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          dir + " holds " + it->path() +
              ", which is not a checkpoint file: a checkpoint directory is "
              "replaced as a whole; give a new or empty directory");
  return ec ? fileError(dir, "cannot list", ec) : llvm::Error::success();
}

/// Removes a directory of .npy files, if it exists.
static llvm::Error removeCheckpointDirectory(const std::string &dir) {
  if (!llvm::sys::fs::is_directory(dir))
    return llvm::Error::success();
  if (llvm::Error error = checkReplaceable(dir))
    return error;
  std::error_code ec;
  std::vector<std::string> files;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec))
    files.push_back(it->path());
  for (const std::string &file : files)
    if (std::error_code removed = llvm::sys::fs::remove(file))
      return fileError(file, "cannot remove", removed);
  if (std::error_code removed = llvm::sys::fs::remove(dir))
    return fileError(dir, "cannot remove", removed);
  return ec ? fileError(dir, "cannot list", ec) : llvm::Error::success();
}

llvm::Error amp::saveCheckpoint(StringRef dirRef, const CompiledStep &step,
                                RunPosition position) {
  std::string dir = dirRef.rtrim('/').str();
  if (dir.empty())
    dir = dirRef.str();
  bool exists = llvm::sys::fs::exists(dir);
  if (exists) {
    if (!llvm::sys::fs::is_directory(dir))
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     dir + " exists and is not a directory");
    if (llvm::Error error = checkReplaceable(dir))
      return error;
  }
  // A partial directory is what a killed save left: never a checkpoint.
  std::string partial = dir + ".partial";
  if (llvm::Error error = removeCheckpointDirectory(partial))
    return error;
  if (std::error_code ec = llvm::sys::fs::create_directories(partial))
    return fileError(partial, "cannot create", ec);

  const StepSignature &signature = step.getSignature();
  for (unsigned index : savedArguments(step))
    if (llvm::Error error = writeDurably(
            pathIn(partial, signature.arguments[index].name + ".npy"),
            serializeNpy(step.getArguments()[index])))
      return error;
  HostArray positionArray(DType::I64, {2});
  positionArray.setFromDouble(0, static_cast<double>(position.stepsDone));
  positionArray.setFromDouble(1, static_cast<double>(position.seed));
  if (llvm::Error error = writeDurably(pathIn(partial, kPositionFile),
                                       serializeNpy(positionArray)))
    return error;
  if (llvm::Error error = syncDirectory(partial))
    return error;

  if (exists) {
    if (::renameat2(AT_FDCWD, partial.c_str(), AT_FDCWD, dir.c_str(),
                    RENAME_EXCHANGE) != 0)
      return fileError(dir, "cannot replace it by " + partial, lastError());
    // `partial` now holds the previous checkpoint.
    if (llvm::Error error = removeCheckpointDirectory(partial))
      return error;
  } else if (::rename(partial.c_str(), dir.c_str()) != 0) {
    return fileError(dir, "cannot rename " + partial + " to it", lastError());
  }
  StringRef parent = llvm::sys::path::parent_path(dir);
  return syncDirectory(parent.empty() ? "." : parent.str());
}

llvm::Expected<RunPosition> amp::loadCheckpoint(StringRef dir,
                                                CompiledStep &step) {
  const StepSignature &signature = step.getSignature();
  std::vector<std::pair<unsigned, HostArray>> loaded;
  llvm::SmallVector<unsigned> hyperparameters =
      signature.getArguments(ArgumentRole::Hyperparameter);
  for (unsigned index : savedArguments(step)) {
    std::string path = pathIn(dir, signature.arguments[index].name + ".npy");
    if (llvm::is_contained(hyperparameters, index) &&
        !llvm::sys::fs::exists(path))
      continue;
    llvm::Expected<HostArray> array = readNpy(path);
    if (!array)
      return array.takeError();
    if (llvm::Error error = step.checkArgument(index, *array))
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     path + ": " +
                                         llvm::toString(std::move(error)));
    loaded.emplace_back(index, std::move(*array));
  }
  std::string positionPath = pathIn(dir, kPositionFile);
  llvm::Expected<HostArray> positionArray = readNpy(positionPath);
  if (!positionArray)
    return positionArray.takeError();
  const auto *raw = reinterpret_cast<const int64_t *>(positionArray->data());
  if (positionArray->getDType() != DType::I64 ||
      positionArray->getShape() != llvm::ArrayRef<int64_t>{2} || raw[0] < 0)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        positionPath + ": expected i64[2] (steps done >= 0, seed)");
  for (auto &[index, array] : loaded)
    if (llvm::Error error = step.setArgument(index, std::move(array)))
      return error;
  return RunPosition{raw[0], static_cast<uint64_t>(raw[1])};
}
