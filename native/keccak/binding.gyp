{
  "targets": [
    {
      "target_name": "keccak",
      "sources": ["src/keccak.cc"],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")"],
      "defines": ["NAPI_VERSION=8", "NAPI_CPP_EXCEPTIONS", "NODE_ADDON_API_DISABLE_DEPRECATED"],
      "cflags!": ["-fno-exceptions"],
      "cflags_cc!": ["-fno-exceptions", "-std=gnu++17"],
      "cflags": ["-O3", "-Wall", "-Wextra", "-Wpedantic", "-Wunused-parameter", "-Werror"],
      "cflags_cc": ["-std=c++17", "-fexceptions"],
      "xcode_settings": {
        "GCC_ENABLE_CPP_EXCEPTIONS": "YES",
        "CLANG_CXX_LANGUAGE_STANDARD": "c++17",
        "OTHER_CFLAGS": ["-O3", "-Wall", "-Wextra", "-Wpedantic", "-Werror"]
      },
      "msvs_settings": {
        "VCCLCompilerTool": { "ExceptionHandling": 1, "WarningLevel": 4, "WarnAsError": "true" }
      }
    }
  ]
}
