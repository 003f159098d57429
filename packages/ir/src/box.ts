/** Box algebra over half-open boxes. Stub; being written. */
export {};
