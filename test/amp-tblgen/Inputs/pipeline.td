include "amp/Pipelines/PassPipeline.td"

def PassA : Pass<"pass-a"> {
  let options = [
    Option<"mode", "mode", "std::string", /*default=*/"\"fast\"", "A's mode">,
    Option<"count", "count", "int64_t", /*default=*/"3", "A's count">,
  ];
}

def PassB : Pass<"pass-b"> {
  let options = [
    Option<"modeOfB", "mode", "std::string", /*default=*/"\"fast\"",
           "B's mode">,
    Option<"flag", "flag", "bool", /*default=*/"false", "B's flag">,
  ];
}

def TestPipeline : PassPipeline<"test-pipeline"> {
  let options = [
    Option<"level", "level", "std::string", /*default=*/"", "The level">,
    Option<"count", "count", "int64_t", /*default=*/"7", "Another count">,
#ifdef MISMATCH
    Option<"flag", "flag", "int", /*default=*/"0", "Not a bool">,
#endif
  ];
  let passes = [PassA, PassB];
}
