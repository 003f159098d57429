{
  "targets": [
    {
      "target_name": "host_copy",
      "sources": ["host_copy.c"],
      "cflags": ["-O2"]
    }
  ]
}
