// SPDX-License-Identifier: GPL-2.0
/* /dev/gpusched: one client per open file; ioctl and a read-only status page. */
#include <linux/anon_inodes.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include "gs.h"

static int gs_open(struct inode *inode, struct file *file)
{
	struct gs_client *c;
	int err;

	c = kzalloc(sizeof(*c), GFP_KERNEL_ACCOUNT);
	if (!c)
		return -ENOMEM;
	err = gs_client_init(c);
	if (err) {
		kfree(c);
		return err;
	}
	file->private_data = c;
	return 0;
}

static int gs_release(struct inode *inode, struct file *file)
{
	struct gs_client *c = file->private_data;

	gs_client_exit(c);
	kfree(c);
	return 0;
}

static long gs_ioctl_attach(struct gs_client *c, void __user *argp)
{
	struct gpusched_attach a;
	int err;

	if (copy_from_user(&a, argp, sizeof(a)))
		return -EFAULT;
	err = gs_pol_check_attach(&a);
	if (err)
		return err;
	return gs_client_attach(c, a.uuid, a.mem_total);
}

static long gs_ioctl_acquire(struct gs_client *c, void __user *argp, bool yield)
{
	struct gpusched_acquire a;

	int err;

	if (copy_from_user(&a, argp, sizeof(a)))
		return -EFAULT;
	err = gs_pol_check_acquire(&a);
	if (err)
		return err;
	return gs_client_acquire(c, &a, yield);
}

static long gs_ioctl_release(struct gs_client *c, void __user *argp)
{
	struct gpusched_release r;

	int err;

	if (copy_from_user(&r, argp, sizeof(r)))
		return -EFAULT;
	err = gs_pol_check_release(&r);
	if (err)
		return err;
	return gs_client_release(c, r.gpu_ns);
}

static long gs_ioctl_set_params(struct gs_client *c, void __user *argp)
{
	struct gpusched_params p;
	int err;

	if (copy_from_user(&p, argp, sizeof(p)))
		return -EFAULT;
	err = gs_pol_check_set_params(&p);
	if (err)
		return err;
	return gs_client_set_params(c, &p);
}

static long gs_ioctl_mem(struct gs_client *c, void __user *argp, bool reserve)
{
	struct gpusched_mem m;
	int err;

	if (copy_from_user(&m, argp, sizeof(m)))
		return -EFAULT;
	err = gs_mem_check(&m);
	if (err)
		return err;
	return gs_client_mem(c, m.bytes, reserve);
}

static long gs_ioctl_get_info(struct gs_client *c, void __user *argp)
{
	struct gpusched_client_info info;
	int err;

	err = gs_client_info(c, &info);
	if (err)
		return err;
	if (copy_to_user(argp, &info, sizeof(info)))
		return -EFAULT;
	return 0;
}

static long gs_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct gs_client *c = file->private_data;
	void __user *argp = (void __user *)arg;

	switch (cmd) {
	case GPUSCHED_IOC_ATTACH:
		return gs_ioctl_attach(c, argp);
	case GPUSCHED_IOC_ACQUIRE:
		return gs_ioctl_acquire(c, argp, false);
	case GPUSCHED_IOC_RELEASE:
		return gs_ioctl_release(c, argp);
	case GPUSCHED_IOC_YIELD:
		return gs_ioctl_acquire(c, argp, true);
	case GPUSCHED_IOC_SET_PARAMS:
		return gs_ioctl_set_params(c, argp);
	case GPUSCHED_IOC_GET_INFO:
		return gs_ioctl_get_info(c, argp);
	case GPUSCHED_IOC_MEM_RESERVE:
		return gs_ioctl_mem(c, argp, true);
	case GPUSCHED_IOC_MEM_RETURN:
		return gs_ioctl_mem(c, argp, false);
	default:
		return -ENOTTY;
	}
}

static void gs_vma_flags(struct vm_area_struct *vma)
{
#ifdef GS_HAVE_VM_FLAGS_MOD
	/* 6.3 made vm_flags read-only outside the mm helpers. */
	vm_flags_mod(vma, VM_DONTCOPY | VM_DONTEXPAND | VM_DONTDUMP,
		     VM_MAYWRITE | VM_MAYEXEC);
#else
	vma->vm_flags |= VM_DONTCOPY | VM_DONTEXPAND | VM_DONTDUMP;
	vma->vm_flags &= ~(VM_MAYWRITE | VM_MAYEXEC);
#endif
}

/*
 * The status page's mapping holds a reference to the page (vm_private_data),
 * not to the client: the client may close and free its own reference while
 * the page is mapped, and the page then keeps its last contents.
 */
static void gs_vm_open(struct vm_area_struct *vma)
{
	get_page(vma->vm_private_data);
}

static void gs_vm_close(struct vm_area_struct *vma)
{
	put_page(vma->vm_private_data);
}

/* Maps the page again after MADV_DONTNEED (or on the first access). */
static vm_fault_t gs_vm_fault(struct vm_fault *vmf)
{
	struct page *page = vmf->vma->vm_private_data;

	get_page(page);
	vmf->page = page;
	return 0;
}

static const struct vm_operations_struct gs_vm_ops = {
	.open = gs_vm_open,
	.close = gs_vm_close,
	.fault = gs_vm_fault,
};

/* What the mapping's file is once mapped; it pins the module, not a client. */
static const struct file_operations gs_status_fops = {
	.owner = THIS_MODULE,
};

/*
 * The status page: exactly one page at offset 0, shared, never writable,
 * never made executable (no mprotect() upgrade: the flags cleared).
 * The mapping refers to a file of its own rather than to /dev/gpusched's,
 * so that close() of the device file releases the client (and its token)
 * even while the page is mapped, as the uapi header says.
 */
static int gs_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct gs_client *c = file->private_data;
	struct file *status;

	if (vma->vm_pgoff != GPUSCHED_STATUS_OFFSET >> PAGE_SHIFT ||
	    vma->vm_end - vma->vm_start != PAGE_SIZE)
		return -EINVAL;
	if (vma->vm_flags & VM_WRITE)
		return -EPERM;
	/*
	 * A private copy would silently stop following the service. MAP_SHARED
	 * sets VM_MAYSHARE; VM_SHARED is cleared for a file opened read-only.
	 */
	if (!(vma->vm_flags & VM_MAYSHARE))
		return -EINVAL;
	status = anon_inode_getfile("[gpusched-status]", &gs_status_fops, NULL,
				    O_RDONLY);
	if (IS_ERR(status))
		return PTR_ERR(status);
	gs_vma_flags(vma);
	vma->vm_ops = &gs_vm_ops;
	vma->vm_private_data = virt_to_page(c->page);
	gs_vm_open(vma);
	vma_set_file(vma, status);
	fput(status);	/* the mapping holds its own reference */
	return 0;
}

static const struct file_operations gs_fops = {
	.owner = THIS_MODULE,
	.open = gs_open,
	.release = gs_release,
	.unlocked_ioctl = gs_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = gs_mmap,
	.llseek = noop_llseek,
};

static struct miscdevice gs_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "gpusched",
	.fops = &gs_fops,
};

/**
 * gs_chardev_init() - register /dev/gpusched
 * @mode: its permissions (module parameter dev_mode)
 *
 * Return: 0 or what misc_register() returned.
 */
int gs_chardev_init(umode_t mode)
{
	gs_misc.mode = mode;
	return misc_register(&gs_misc);
}

/**
 * gs_chardev_exit() - unregister /dev/gpusched (no file is open then)
 */
void gs_chardev_exit(void)
{
	misc_deregister(&gs_misc);
}
