// SPDX-License-Identifier: GPL-2.0
/* /dev/gpusched: one client per open file; ioctl and a read-only status page. */
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
	static const u8 zero[GPUSCHED_UUID_LEN];

	if (copy_from_user(&a, argp, sizeof(a)))
		return -EFAULT;
	if (a.flags)
		return -EOPNOTSUPP;
	if (a.reserved || !memcmp(a.uuid, zero, sizeof(zero)))
		return -EINVAL;
	return gs_client_attach(c, a.uuid);
}

static long gs_ioctl_acquire(struct gs_client *c, void __user *argp, bool yield)
{
	struct gpusched_acquire a;

	if (copy_from_user(&a, argp, sizeof(a)))
		return -EFAULT;
	if (a.flags & ~GPUSCHED_ACQUIRE_ALL)
		return -EOPNOTSUPP;
	if (a.due_us && !(a.flags & GPUSCHED_ACQUIRE_DUE))
		return -EINVAL;
	return gs_client_acquire(c, &a, yield);
}

static long gs_ioctl_release(struct gs_client *c, void __user *argp)
{
	struct gpusched_release r;

	if (copy_from_user(&r, argp, sizeof(r)))
		return -EFAULT;
	if (r.flags)
		return -EOPNOTSUPP;
	if (r.reserved)
		return -EINVAL;
	return gs_client_release(c);
}

static long gs_ioctl_set_params(struct gs_client *c, void __user *argp)
{
	struct gpusched_params p;

	if (copy_from_user(&p, argp, sizeof(p)))
		return -EFAULT;
	if (p.mask & ~GPUSCHED_PARAM_ALL)
		return -EOPNOTSUPP;
	if (p.reserved[0] || p.reserved[1])
		return -EINVAL;
	return gs_client_set_params(c, &p);
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
	default:
		return -ENOTTY;
	}
}

static void gs_vma_flags(struct vm_area_struct *vma)
{
#ifdef GS_HAVE_VM_FLAGS_MOD
	/* 6.3 made vm_flags read-only outside the mm helpers. */
	vm_flags_mod(vma, VM_DONTCOPY | VM_DONTEXPAND | VM_DONTDUMP,
		     VM_MAYWRITE);
#else
	vma->vm_flags |= VM_DONTCOPY | VM_DONTEXPAND | VM_DONTDUMP;
	vma->vm_flags &= ~VM_MAYWRITE;
#endif
}

/* The status page: exactly one page at offset 0, never writable. */
static int gs_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct gs_client *c = file->private_data;

	if (vma->vm_pgoff != GPUSCHED_STATUS_OFFSET >> PAGE_SHIFT ||
	    vma->vm_end - vma->vm_start != PAGE_SIZE)
		return -EINVAL;
	if (vma->vm_flags & VM_WRITE)
		return -EPERM;
	gs_vma_flags(vma);
	return vm_insert_page(vma, vma->vm_start, virt_to_page(c->page));
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

int gs_chardev_init(umode_t mode)
{
	gs_misc.mode = mode;
	return misc_register(&gs_misc);
}

void gs_chardev_exit(void)
{
	misc_deregister(&gs_misc);
}
