package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/sapipe/sapipe/kernels/cuda"
)

const devicesHelp = `Lists the GPUs that the CUDA driver reports, one line each: the --device name to choose it,
its name, memory, compute capability and multiprocessors. sapipe uses GPUs of compute capability
8.0 or newer. Without a usable GPU it prints one line saying why (no driver, no device), and the
commands then run on the CPU under --device auto. The driver (libcuda.so.1) is looked up on the
loader's path; SAPIPE_LIBCUDA names another library file.

Example:
   sapipe devices
   gpu:0  NVIDIA H200  139.8 GiB  compute 9.0  132 SMs`

func devicesCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:        "devices",
		Usage:       "list the GPUs sapipe can use",
		UsageText:   "sapipe devices",
		Description: devicesHelp,
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageError{fmt.Sprintf("devices takes no arguments (got %q)", c.Args().First())}
			}
			return listDevices(e)
		},
	}
}

// listDevices writes the device list, or the one line that says why there is none.
func listDevices(e *env) error {
	infos, err := cuda.Devices()
	if err == nil && len(infos) == 0 {
		err = fmt.Errorf("the CUDA driver reports no GPU")
	}
	if err != nil {
		_, werr := fmt.Fprintf(e.stdout, "no usable GPU: %s\n", oneLine(err.Error()))
		return werr
	}
	for _, d := range infos {
		line := fmt.Sprintf("gpu:%d  %s  %.1f GiB  compute %d.%d  %d SMs", d.Ordinal, d.Name,
			float64(d.TotalMem)/(1<<30), d.Major, d.Minor, d.SMs)
		if d.Major < 8 {
			line += "  (not used: sapipe needs compute capability 8.0)"
		}
		if _, err := fmt.Fprintln(e.stdout, line); err != nil {
			return err
		}
	}
	return nil
}
