{
  "targets": [
    {
      "target_name": "mpi_transport",
      "sources": ["mpi_transport.c"],
      "cflags": ["-O2", "-Wall", "<!@(mpicc --showme:compile)"],
      "libraries": ["<!@(mpicc --showme:link)", "-ldl", "-lpthread"]
    }
  ]
}
