/** How many devices a run's ranks are placed on: `devices`, else one a handle, else one (run, bench and the tuner ask alike). */
export const devicesOf = (o: { readonly devices?: number; readonly handles?: readonly unknown[] }): number => o.devices ?? o.handles?.length ?? 1;
