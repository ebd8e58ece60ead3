{
  "variables": {
    "have_verbs%": "<!(node -p \"process.env.MONSOON_RDMA_VERBS === '0' ? 0 : (require('fs').existsSync('/usr/include/infiniband/verbs.h') && require('fs').existsSync('/usr/include/rdma/rdma_cma.h') ? 1 : 0)\")"
  },
  "targets": [
    {
      "target_name": "rdma",
      "sources": ["src/rdma.cc", "src/regionWalk.cc"],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")", "../keccak/src"],
      "defines": ["NAPI_VERSION=8", "NAPI_CPP_EXCEPTIONS", "NODE_ADDON_API_DISABLE_DEPRECATED"],
      "cflags!": ["-fno-exceptions"],
      "cflags_cc!": ["-fno-exceptions", "-std=gnu++17"],
      "cflags": ["-O3", "-Wall", "-Wextra", "-Wpedantic", "-Wunused-parameter", "-Werror"],
      "cflags_cc": ["-std=c++17", "-fexceptions"],
      "conditions": [
        [
          "have_verbs==1",
          {
            "defines": ["MONSOON_HAVE_VERBS"],
            "libraries": ["-libverbs", "-lrdmacm"]
          }
        ]
      ]
    }
  ]
}
