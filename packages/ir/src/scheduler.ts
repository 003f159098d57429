/** The tile scheduler: ticket -> tile coordinates. Stub; being written. */
export {};
