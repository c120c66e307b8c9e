# Thin shim for node-gyp based tooling (prebuildify, node-gyp-build's fallback "node-gyp rebuild").
# The real build description is CMakeLists.txt; this target only hands over to it, so the llama.cpp
# source list is never duplicated here. Output: build/Release/llama_dialog.node (cmake-js layout).
{
  "targets": [
    {
      "target_name": "llama_dialog_cmake",
      "type": "none",
      "actions": [
        {
          "action_name": "cmake_js_build",
          "inputs": ["CMakeLists.txt"],
          "outputs": ["build/Release/llama_dialog.node"],
          "action": ["node", "scripts/build-native.mjs"]
        }
      ]
    }
  ]
}
